defmodule SeedApp do
  @moduledoc "Runs the example's scenarios and prints what it saw, one fact a line."

  alias SeedApp.{RPC, Upstream}

  def main do
    Enum.each(upstream() ++ rpc(), fn {name, value} -> IO.puts("#{name}: #{inspect(value)}") end)
  end

  defp upstream do
    table = Upstream.start()
    results = for _ <- 1..31, do: Upstream.call(table, "trongrid", fn -> :called end)
    batch = Upstream.call_batch(table, "trongrid", 10, fn -> :batch end)
    :ok = Upstream.forget(table, "trongrid")
    {:batch, remaining} = Upstream.call_batch(table, "trongrid", 10, fn -> :batch end)
    five = for _ <- 1..6, do: Upstream.call(table, "etherscan", fn -> :called end)
    :ok = Upstream.forget_all(table)

    [
      burst_admitted: Enum.count(results, &(&1 == :called)),
      then_limited_with_hint: match?({:error, {:retry_after, w}} when w > 0 and w <= 200, List.last(results)),
      batch_limited_with_hint: match?({:error, {:retry_after, w}} when w > 0 and w <= 2_000, batch),
      batch_after_reset_remaining: remaining,
      etherscan_admitted: Enum.count(five, &(&1 == :called)),
      available_after_reset_all: Upstream.available(table, "etherscan")
    ]
  end

  defp rpc do
    {owner, table} = RPC.start(fn body -> {:served, body} end)
    served = for i <- 1..50, do: RPC.call(table, i)

    # callers that die holding a reservation they never enqueued
    for _ <- 1..3 do
      {pid, ref} = spawn_monitor(fn -> {:ok, _token} = DrinkMeAlice.Credits.reserve(table, :internal) end)
      receive do: ({:DOWN, ^ref, :process, ^pid, _} -> :ok)
    end

    # many callers at once, more than there are slots
    parent = self()

    for i <- 1..60 do
      spawn(fn -> send(parent, {:concurrent, RPC.call(table, i, :general, 10_000)}) end)
    end

    concurrent = for _ <- 1..60, do: receive(do: ({:concurrent, r} -> r))

    expired = RPC.call(table, :late, :general, 0)
    internal = RPC.call(table, :internal_job, :internal)
    health = wait_idle(table, 5_000)
    :ok = RPC.stop(owner)

    [
      served_in_order: served == Enum.map(1..50, &{:ok, {:served, &1}}),
      concurrent_answered: length(concurrent),
      concurrent_served_or_busy: Enum.all?(concurrent, &(match?({:ok, {:served, _}}, &1) or &1 == {:error, :busy})),
      concurrent_some_served: Enum.any?(concurrent, &match?({:ok, {:served, _}}, &1)),
      expired_or_timed_out: expired in [{:error, :expired}, {:error, :timeout}],
      internal_class: internal,
      usage_after: health.usage,
      bounds: health.bounds,
      after_owner_stopped: RPC.call(table, :nobody)
    ]
  end

  # The owner frees the expired request's slot and sweeps the dead callers'
  # on its next polls.
  defp wait_idle(table, ms_left) do
    health = RPC.health(table)
    idle? = health.usage.general.free == 26 and health.usage.internal.free == 6

    if idle? or ms_left <= 0 do
      health
    else
      Process.sleep(5)
      wait_idle(table, ms_left - 5)
    end
  end
end
