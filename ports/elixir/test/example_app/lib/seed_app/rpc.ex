defmodule SeedApp.RPC do
  @moduledoc """
  An RPC owner bounded by the credit table: callers reserve a slot, store
  their request in it and wait; the owner polls the enqueued rows, serves
  each and frees its slot. There is no caller → owner message.
  """
  alias DrinkMeAlice.Credits

  @poll_ms 2

  @doc "Starts the owner; answers `{owner_pid, table}`."
  def start(handler) do
    parent = self()
    pid = spawn(fn -> init(parent, handler) end)

    receive do
      {:rpc_table, ^pid, table} -> {pid, table}
    end
  end

  defp init(parent, handler) do
    table = Credits.new()
    send(parent, {:rpc_table, self(), table})
    loop(table, handler)
  end

  defp loop(table, handler) do
    for {n, epoch, _marked_ms, _payload} <- Credits.enqueued(table) do
      case Credits.take(table, n, epoch) do
        {:ok, {ref, %{from: from, body: body}, deadline}} ->
          reply =
            if System.monotonic_time(:millisecond) > deadline,
              do: {:error, :expired},
              else: {:ok, handler.(body)}

          send(from, {ref, reply})
          :ok = Credits.finish(table, {n, epoch})

        :none ->
          :ok
      end
    end

    _reclaimed = Credits.sweep(table)

    receive do
      :stop -> :ok
    after
      @poll_ms -> loop(table, handler)
    end
  end

  @doc "Calls the owner with `body`, waiting at most `timeout` ms."
  def call(table, body, class \\ :general, timeout \\ 5_000) do
    case Credits.reserve(table, class) do
      {:ok, token} ->
        ref = make_ref()
        deadline = System.monotonic_time(:millisecond) + timeout

        case Credits.enqueue(table, token, {ref, %{from: self(), body: body}, deadline}) do
          :ok ->
            receive do
              {^ref, reply} -> reply
            after
              timeout -> {:error, :timeout}
            end

          {:error, :lost} ->
            :ok = Credits.release(table, token)
            {:error, :lost}

          {:error, :no_table} ->
            {:error, :no_owner}
        end

      {:error, :exhausted} ->
        {:error, :busy}

      {:error, :no_table} ->
        {:error, :no_owner}
    end
  end

  @doc "Health figures."
  def health(table), do: %{usage: Credits.snapshot(table), bounds: Credits.bounds()}

  @doc "Stops the owner; its table goes with it."
  def stop(pid) do
    ref = Process.monitor(pid)
    send(pid, :stop)

    receive do
      {:DOWN, ^ref, :process, ^pid, _} -> :ok
    end
  end
end
