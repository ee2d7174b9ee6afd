defmodule Tollgate.ConcurrencyTest do
  # Many processes at once. The clock is frozen (:now_ms pinned), so every
  # count below is exact: nothing refills while the processes race.
  use ExUnit.Case, async: false
  alias Tollgate.{Credits, TokenBucket}

  @procs 400

  # Starts n processes that each wait for :go, then run fun.(i); releases them
  # together and answers their results in order once every one has exited.
  defp race(n, fun) do
    parent = self()

    procs =
      for i <- 1..n do
        spawn_monitor(fn ->
          receive do
            :go -> send(parent, {:done, self(), fun.(i)})
          end
        end)
      end

    Enum.each(procs, fn {pid, _} -> send(pid, :go) end)

    for {pid, ref} <- procs do
      receive do
        {:DOWN, ^ref, :process, ^pid, :normal} -> :ok
        {:DOWN, ^ref, :process, ^pid, reason} -> flunk("a racing process crashed: #{inspect(reason)}")
      after
        30_000 -> flunk("a racing process did not finish")
      end

      assert_received {:done, ^pid, result}
      result
    end
  end

  describe "token bucket, #{@procs} processes, frozen clock" do
    test "exactly :capacity takes are admitted (the seed's concurrency sentence)" do
      t = TokenBucket.new()
      lim = [capacity: 100, refill_per_second: 1.0, now_ms: 1_000]
      results = race(@procs, fn _ -> TokenBucket.take(t, "k", lim) end)
      ok = for {:ok, left} <- results, do: left
      assert length(ok) == 100
      assert Enum.count(results, &(&1 == {:error, :rate_limited})) == @procs - 100
      # each admitted take saw its own state: the remainders are 99.0 .. 0.0
      assert Enum.sort(ok) == Enum.map(0..99, &(&1 * 1.0))
      assert TokenBucket.peek(t, "k", lim) == 0.0
    end

    test "T2: a lost race is retried, never refused: capacity #{@procs}, all #{@procs} admitted" do
      t = TokenBucket.new()
      lim = [capacity: @procs, refill_per_second: 1.0, now_ms: 0]

      for round <- 1..5 do
        :ok = TokenBucket.reset(t, "k")
        results = race(@procs, fn _ -> TokenBucket.take(t, "k", lim) end)
        refused = Enum.count(results, &(&1 == {:error, :rate_limited}))
        assert refused == 0, "round #{round}: #{refused} takes refused while tokens remained"
        assert Enum.sort(for {:ok, l} <- results, do: l) == Enum.map(0..(@procs - 1), &(&1 * 1.0))
      end
    end

    test "#{@procs} processes taking 20 times each: exactly :capacity admitted in all" do
      t = TokenBucket.new()
      lim = [capacity: 4_000, refill_per_second: 1.0, now_ms: 0]
      results = race(@procs, fn _ -> Enum.count(1..20, fn _ -> match?({:ok, _}, TokenBucket.take(t, "k", lim)) end) end)
      assert Enum.sum(results) == 4_000
      assert TokenBucket.peek(t, "k", lim) == 0.0
    end

    test "fractional costs: the admitted cost never exceeds capacity" do
      t = TokenBucket.new()
      lim = [capacity: 10, refill_per_second: 1.0, cost: 0.3, now_ms: 0]
      results = race(@procs, fn _ -> TokenBucket.take(t, "k", lim) end)
      # 0.3 * 33 = 9.9 (rounded remainders decide whether a 34th fits: it must not)
      assert Enum.count(results, &match?({:ok, _}, &1)) == 33
    end

    test "stale clocks racing a newer one: no interval credited twice (T4)" do
      t = TokenBucket.new()
      {:ok, +0.0} = TokenBucket.take(t, "k", capacity: 10, refill_per_second: 10, cost: 10, now_ms: 0)

      results =
        race(@procs, fn i ->
          # half the processes read 1000 ms, half a stale 0 ms
          TokenBucket.take(t, "k", capacity: 10, refill_per_second: 10, now_ms: if(rem(i, 2) == 0, do: 1000, else: 0))
        end)

      # 10 tokens accrued between 0 and 1000 ms, and no more can be admitted
      assert Enum.count(results, &match?({:ok, _}, &1)) == 10
    end

    test "many keys at once: every key admits exactly its capacity" do
      t = TokenBucket.new()

      results =
        race(@procs, fn i ->
          {rem(i, 8), TokenBucket.take(t, {:"$1", rem(i, 8)}, capacity: 20, refill_per_second: 1, now_ms: 0)}
        end)

      for k <- 0..7 do
        assert Enum.count(results, &match?({^k, {:ok, _}}, &1)) == 20
      end
    end
  end

  # Takes every key in turn until stop?.() holds (checked once a pass),
  # answering the keys admitted.
  defp take_until(stop?, keys, take, acc \\ []) do
    acc = for(k <- keys, match?({:ok, _}, take.(k)), do: k) ++ acc
    if stop?.(), do: acc, else: take_until(stop?, keys, take, acc)
  end

  describe "token bucket, reclaims racing #{@procs} processes (T12)" do
    test "on a frozen clock for takes and reclaims, every key admits exactly its capacity" do
      # A reclaim at the takes' own clock never forgets a bucket someone took
      # from (it is not full), so admissions are conserved; every round
      # starts on a new table, so first takes (placeholders) race reclaims.
      lim = [capacity: 20, refill_per_second: 1.0, now_ms: 5_000]

      for round <- 1..10 do
        t = TokenBucket.new()

        results =
          race(@procs, fn i ->
            if rem(i, 8) == 0 do
              {:reclaimed, Enum.sum(for _ <- 1..3, do: TokenBucket.reclaim(t, lim))}
            else
              {rem(i, 4), TokenBucket.take(t, {:key, rem(i, 4)}, lim)}
            end
          end)

        assert Enum.sum(for {:reclaimed, n} <- results, do: n) == 0

        for k <- 0..3 do
          assert Enum.count(results, &match?({^k, {:ok, _}}, &1)) == 20, "round #{round}, key #{k}"
          assert TokenBucket.peek(t, {:key, k}, lim) == 0.0
        end
      end
    end

    test "stale takes racing reclaims (and current takes): every key admits exactly its capacity once" do
      # Each key is drained at 1000 ms and full again by 2000 ms (4 tokens at
      # 1000 a second). Reclaims at 2000 ms forget it; stale takes at
      # 1000 ms race them, and in even rounds takes at 2000 ms too. Whichever
      # wins, the key then holds one bucket stamped 2000 ms, from which only
      # 4 more takes succeed: a stale take that recreated a forgotten bucket
      # with its own clock (no floor yet, or a floor raised after the
      # deletes), or a reclaim that deleted a bucket a take at 2000 ms had
      # just committed to, admits more.
      keys = for k <- 1..50, do: "key-#{k}"
      lim = fn now -> [capacity: 4, refill_per_second: 1000, now_ms: now] end

      for round <- 1..8 do
        t = TokenBucket.new()
        current? = rem(round, 2) == 0

        for k <- keys, _ <- 1..4, do: {:ok, _} = TokenBucket.take(t, k, lim.(1_000))
        for k <- keys, do: {:error, :rate_limited} = TokenBucket.take(t, k, lim.(1_000))

        # the takers go on until every reclaimer is done
        done = :atomics.new(1, [])
        every = if current?, do: 20, else: 100
        reclaimers = div(@procs, every)

        results =
          race(@procs, fn i ->
            if rem(i, every) == 0 do
              n = Enum.sum(for _ <- 1..5, do: TokenBucket.reclaim(t, lim.(2_000)))
              :atomics.add(done, 1, 1)
              {:reclaimed, n}
            else
              now = if current? and rem(i, 4) == 1, do: 2_000, else: 1_000
              {start, rest} = Enum.split(keys, rem(i, length(keys)))

              take_until(
                fn -> :atomics.get(done, 1) == reclaimers end,
                rest ++ start,
                &TokenBucket.take(t, &1, lim.(now))
              )
            end
          end)

        admitted = results |> Enum.reject(&match?({:reclaimed, _}, &1)) |> List.flatten() |> Enum.frequencies()
        reclaimed = Enum.sum(for {:reclaimed, n} <- results, do: n)

        # Each key is forgotten at most once: the bucket made after it is
        # never full again. Without takes at 2000 ms nothing else refills a
        # drained bucket, so every key is forgotten, once.
        if current?, do: assert(reclaimed <= length(keys)), else: assert(reclaimed == length(keys))

        for k <- keys do
          # what the race left, taken at 2000 ms (a bucket stamped 1000 ms would refill here)
          left = Enum.count(1..10, fn _ -> match?({:ok, _}, TokenBucket.take(t, k, lim.(2_000))) end)
          assert Map.get(admitted, k, 0) + left == 4, "round #{round}, #{k}: #{Map.get(admitted, k, 0)} + #{left}"
        end
      end
    end

    test "one reclaim over 2000 drained keys: a take racing it at a stale clock, or on a row it judged full" do
      # A reclaim at 2000 ms over 2000 keys drained at 1000 ms (each full
      # again by 2000 ms), while 4 processes sweep the keys with takes, first
      # at a stale 1000 ms, then on a new table at 2000 ms. Stale: each key
      # it forgot is taken from while it is still forgetting others, so a
      # floor raised only after the deletes stamps those buckets 1000 ms,
      # and they refill by 2000 ms. Current: a take commits to a row the
      # reclaim read and judged full before it deletes it, so a delete by key
      # (not by the whole row) forgets the bucket just taken from. Either
      # way a key would admit more than its 4 tokens.
      keys = for k <- 1..2_000, do: "key-#{k}"
      lim = fn now -> [capacity: 4, refill_per_second: 1000, now_ms: now] end

      for now <- [1_000, 2_000] do
        t = TokenBucket.new()
        for k <- keys, _ <- 1..4, do: {:ok, _} = TokenBucket.take(t, k, lim.(1_000))
        done = :atomics.new(1, [])

        results =
          race(5, fn
            1 ->
              n = TokenBucket.reclaim(t, lim.(2_000))
              :atomics.add(done, 1, 1)
              {:reclaimed, n}

            i ->
              {start, rest} = Enum.split(keys, i * 400)
              take_until(fn -> :atomics.get(done, 1) == 1 end, rest ++ start, &TokenBucket.take(t, &1, lim.(now)))
          end)

        assert [{:reclaimed, reclaimed} | takers] = results
        # stale takes refill nothing: the reclaim finds every key full
        if now == 1_000, do: assert(reclaimed == 2_000), else: assert(reclaimed <= 2_000)
        admitted = takers |> List.flatten() |> Enum.frequencies()
        assert map_size(admitted) > 0

        for k <- keys do
          left = Enum.count(1..10, fn _ -> match?({:ok, _}, TokenBucket.take(t, k, lim.(2_000))) end)
          assert Map.get(admitted, k, 0) + left == 4, "takes at #{now} ms, #{k}: #{Map.get(admitted, k, 0)} + #{left}"
        end
      end
    end
  end

  describe "credits, #{@procs} processes" do
    test "exactly 26 general and 6 internal reservations are granted, on distinct slots" do
      t = Credits.new()

      results =
        race(@procs, fn i ->
          class = if rem(i, 4) == 0, do: :internal, else: :general
          {class, Credits.reserve(t, class)}
        end)

      general = for {:general, {:ok, {n, _}}} <- results, do: n
      internal = for {:internal, {:ok, {n, _}}} <- results, do: n
      assert Enum.sort(general) == Enum.to_list(1..26)
      assert Enum.sort(internal) == Enum.to_list(27..32)
      assert Enum.count(results, &match?({_, {:error, :exhausted}}, &1)) == @procs - 32
      # every holder has exited: sweep reclaims all 32
      assert Credits.sweep(t) == 32
      assert Credits.snapshot(t).general.free == 26
    end

    test "holders that die at every point: sweep frees only the rows that were reserved" do
      t = Credits.new()

      results =
        race(@procs, fn i ->
          case Credits.reserve(t, :general) do
            {:ok, tok} ->
              case rem(i, 3) do
                0 -> {:reserved, tok}
                1 -> {Credits.enqueue(t, tok, {:req, i}), tok}
                2 -> {:released, Credits.release(t, tok)}
              end

            {:error, :exhausted} ->
              :exhausted
          end
        end)

      # every racing process has now returned, so every holder is dead
      held = for {:reserved, tok} <- results, do: tok
      queued = for {:ok, tok} <- results, do: tok
      assert Credits.sweep(t) == length(held)
      s = Credits.snapshot(t).general
      assert s.reserved == 0
      assert s.enqueued == length(queued)
      assert s.free == 26 - length(queued)

      # the owner still drains every enqueued row of the dead callers
      for {n, e, _, {:req, _}} <- Credits.enqueued(t) do
        assert {:ok, {:req, _}} = Credits.take(t, n, e)
        assert Credits.finish_count(t, {n, e}) == 1
      end

      assert Credits.snapshot(t).general.free == 26
    end

    test "cycling: reserve, enqueue, take, finish by #{@procs} processes; every payload taken once" do
      t = Credits.new()

      results =
        race(@procs, fn i ->
          Enum.map(1..5, fn j ->
            case Credits.reserve(t, :general) do
              {:ok, {n, e} = tok} ->
                :ok = Credits.enqueue(t, tok, {i, j})
                {:ok, {^i, ^j}} = Credits.take(t, n, e)
                :ok = Credits.finish(t, tok)
                :served

              {:error, :exhausted} ->
                :exhausted
            end
          end)
        end)

      served = results |> List.flatten() |> Enum.count(&(&1 == :served))
      assert served >= 26
      assert Credits.snapshot(t).general == %{free: 26, reserved: 0, enqueued: 0, processing: 0}
    end

    test "exhausted is never answered while a slot is free throughout (two scans, spec/credits.md §5)" do
      t = Credits.new()
      # 25 processes each hold at most one general slot at a time, so at every
      # instant at least one of the 26 is free: reserve must never be refused.
      # A single pass can see all 26 taken when a slot frees behind it and
      # another is claimed ahead of it.
      results =
        race(25, fn _ ->
          Enum.reduce(1..1_000, 0, fn _, refused ->
            case Credits.reserve(t, :general) do
              {:ok, tok} ->
                # hold the slot across a reschedule, so that most of the 25
                # are held at any instant and reservers contend for the rest
                :erlang.yield()
                :ok = Credits.release(t, tok)
                refused

              {:error, :exhausted} ->
                refused + 1
            end
          end)
        end)

      assert Enum.sum(results) == 0
    end
  end
end
