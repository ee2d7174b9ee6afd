defmodule Tollgate.Credits do
  @moduledoc """
  The 32-slot credit table on ETS, ported from tollgate's spec
  (spec/credits.md) in the style of the seed: one row per slot
  `{n, state, class, holder, epoch, marked_ms, payload}`, every transition one
  `:ets.select_replace/2` on one literal integer key, pinned by the epoch.

    * reserve: `free → reserved` for `self()` under a fresh epoch
      (`:erlang.unique_integer/1`: never issued twice in the VM's life, C3).
      It answers `:exhausted` only after two scans of the class saw the same
      non-free `{slot, epoch}` rows (spec/credits.md §5, §7): one pass over
      independent rows is not an atomic view of the class.
    * enqueue: `reserved → enqueued` in one write that installs the payload as
      `{:const, payload}` (a payload is data, never read as a match
      expression), only for `self()` with that epoch (C4, C5).
    * take / finish / release / sweep as spec/credits.md §3. Holders are
      processes; sweep frees a reserved row only when `Process.alive?/1` says
      its holder is dead (C10).
    * A table belongs to its owner process; when the owner dies the table is
      gone, and every operation answers as a dead table (C11). An ETS
      `ArgumentError` means "no table" only when `:ets.info/1` confirms the
      table is gone; on a live table it is re-raised (C12).
  """

  @general 1..26
  @internal 27..32

  def bounds, do: %{general: 26, internal: 6, total: 32}

  defp range(:general), do: @general
  defp range(:internal), do: @internal

  defp class_of(n) when n in @general, do: :general
  defp class_of(n) when n in @internal, do: :internal

  @doc "Create the slot table, owned by the calling process."
  def new do
    t = :ets.new(:tollgate_credits, [:set, :public, read_concurrency: true, write_concurrency: true])
    for n <- 1..32, do: :ets.insert(t, free(n))
    t
  end

  defp free(n), do: {n, :free, class_of(n), 0, 0, 0, nil}

  # Runs f; an ArgumentError from ETS is `dead` only if the table is gone.
  defp guarded(t, dead, f) do
    try do
      f.()
    rescue
      e in ArgumentError ->
        if :ets.info(t) == :undefined, do: dead, else: reraise(e, __STACKTRACE__)
    end
  end

  @doc "`{:ok, {n, epoch}}` | `{:error, :exhausted | :no_table}`"
  def reserve(t, class) when class in [:general, :internal] do
    guarded(t, {:error, :no_table}, fn -> reserve_loop(t, class, scan(t, class)) end)
  end

  defp scan(t, class) do
    for n <- range(class) do
      [{^n, state, _, _, epoch, _, _}] = :ets.lookup(t, n)
      {n, state, epoch}
    end
  end

  defp reserve_loop(t, class, seen) do
    case Enum.find_value(seen, fn {n, state, _} -> state == :free and claim(t, n, class) end) do
      nil ->
        again = scan(t, class)

        if again == seen and Enum.all?(again, fn {_, s, _} -> s != :free end) do
          {:error, :exhausted}
        else
          reserve_loop(t, class, again)
        end

      token ->
        {:ok, token}
    end
  end

  defp claim(t, n, class) do
    epoch = :erlang.unique_integer([:positive, :monotonic])
    row = {n, :reserved, class, self(), epoch, 0, nil}

    case :ets.select_replace(t, [{free(n), [], [{:const, row}]}]) do
      1 -> {n, epoch}
      0 -> false
    end
  end

  @doc "`:ok` | `{:error, :lost | :no_table}`"
  def enqueue(t, {n, epoch}, payload, now_ms) do
    guarded(t, {:error, :no_table}, fn ->
      spec = [
        {{n, :reserved, :"$1", self(), epoch, :_, nil}, [],
         [{{n, :enqueued, :"$1", self(), epoch, now_ms, {:const, payload}}}]}
      ]

      case :ets.select_replace(t, spec) do
        1 -> :ok
        0 -> {:error, :lost}
      end
    end)
  end

  @doc "`{:ok, payload}` | `:none`"
  def take(t, {n, epoch}) do
    guarded(t, :none, fn ->
      case :ets.lookup(t, n) do
        [{^n, :enqueued, _, _, ^epoch, _, payload}] ->
          # The payload of an epoch never changes once enqueued, so the one
          # read here is the one the swap below moves to processing.
          spec = [
            {{n, :enqueued, :"$1", :"$2", epoch, :"$3", :"$4"}, [],
             [{{n, :processing, :"$1", :"$2", epoch, :"$3", :"$4"}}]}
          ]

          case :ets.select_replace(t, spec) do
            1 -> {:ok, payload}
            0 -> :none
          end

        _ ->
          :none
      end
    end)
  end

  @doc "Frees a processing (or, defensively, enqueued) row of the epoch: 1 if this call freed it, else 0."
  def finish(t, {n, epoch}) do
    guarded(t, 0, fn ->
      spec = [
        {{n, :"$1", :_, :_, epoch, :_, :_},
         [{:orelse, {:"=:=", :"$1", :processing}, {:"=:=", :"$1", :enqueued}}], [{:const, free(n)}]}
      ]

      :ets.select_replace(t, spec)
    end)
  end

  @doc "Caller-side free of a reserved row of `self()` and the epoch: 1 if this call freed it, else 0."
  def release(t, {n, epoch}) do
    guarded(t, 0, fn ->
      :ets.select_replace(t, [{{n, :reserved, :_, self(), epoch, :_, nil}, [], [{:const, free(n)}]}])
    end)
  end

  @doc "Frees every reserved row whose holder process is dead; answers how many."
  def sweep(t) do
    guarded(t, 0, fn ->
      :ets.select(t, [{{:"$1", :reserved, :_, :"$2", :"$3", :_, :_}, [], [{{:"$1", :"$2", :"$3"}}]}])
      |> Enum.reject(fn {_, pid, _} -> Process.alive?(pid) end)
      |> Enum.map(fn {n, pid, epoch} ->
        :ets.select_replace(t, [{{n, :reserved, :_, pid, epoch, :_, nil}, [], [{:const, free(n)}]}])
      end)
      |> Enum.sum()
    end)
  end

  @doc "The enqueued rows `{n, epoch, marked_ms, payload}`, by marked_ms, ties by slot (C13)."
  def enqueued(t) do
    guarded(t, [], fn ->
      :ets.select(t, [{{:"$1", :enqueued, :_, :_, :"$2", :"$3", :"$4"}, [], [{{:"$1", :"$2", :"$3", :"$4"}}]}])
      |> Enum.sort_by(fn {n, _, marked, _} -> {marked, n} end)
    end)
  end

  @doc "Per class, how many rows are free, reserved, enqueued, processing (C14)."
  def snapshot(t) do
    zero = %{free: 0, reserved: 0, enqueued: 0, processing: 0}

    guarded(t, %{general: zero, internal: zero}, fn ->
      Enum.reduce(1..32, %{general: zero, internal: zero}, fn n, acc ->
        [{^n, state, class, _, _, _, _}] = :ets.lookup(t, n)
        update_in(acc, [class, state], &(&1 + 1))
      end)
    end)
  end
end
