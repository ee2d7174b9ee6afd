defmodule Tollgate.TokenBucketTest do
  # One test (or a few) per sentence of the seed's documentation
  # (shared/seeds/token_bucket.md), then the departures of spec/tokenbucket.md
  # §7 and the keys. The report of issue 16 maps each sentence to its test.
  use ExUnit.Case, async: true
  alias Tollgate.TokenBucket, as: TB

  defp lim(cap, rate, now), do: [capacity: cap, refill_per_second: rate, now_ms: now]

  # Takes until the first refusal; how many were admitted.
  defp drain(t, key, opts, max \\ 10_000) do
    Enum.reduce_while(1..max, 0, fn _, n ->
      case TB.take(t, key, opts) do
        {:ok, _} -> {:cont, n + 1}
        {:error, :rate_limited} -> {:halt, n}
      end
    end)
  end

  defp dead_process(fun) do
    {pid, ref} = spawn_monitor(fun)
    assert_receive {:DOWN, ^ref, :process, ^pid, _}, 5_000
    pid
  end

  describe "seed moduledoc" do
    test "ETS-backed: the state is rows of the ETS table new/1 returned" do
      t = TB.new()
      assert :ets.info(t, :type) == :set
      {:ok, _} = TB.take(t, "k", lim(2, 1, 0))
      assert :ets.info(t, :size) == 1
    end

    test "a bucket holds at most :capacity tokens and regains them at :refill_per_second" do
      t = TB.new()
      assert {:ok, +0.0} = TB.take(t, "k", [cost: 4] ++ lim(4, 2.0, 0))
      assert TB.peek(t, "k", lim(4, 2.0, 500)) == 1.0
      assert TB.peek(t, "k", lim(4, 2.0, 1500)) == 3.0
      assert TB.peek(t, "k", lim(4, 2.0, 2000)) == 4.0
      assert TB.peek(t, "k", lim(4, 2.0, 1_000_000)) == 4.0
    end

    test "a caller may burst up to :capacity, is then refused, and proceeds at the refill rate" do
      t = TB.new()
      assert drain(t, "k", lim(30, 5.0, 0)) == 30
      assert TB.take(t, "k", lim(30, 5.0, 199)) == {:error, :rate_limited}
      assert {:ok, _} = TB.take(t, "k", lim(30, 5.0, 200))
      # one second later: 5 more, not a new burst
      assert drain(t, "k", lim(30, 5.0, 1200)) == 5
    end

    test "no two windows' worth across a window boundary (unlike a fixed-window counter)" do
      t = TB.new()
      assert drain(t, "k", lim(10, 10.0, 999)) == 10
      # a fixed one-second window would admit 10 more at 1000 ms
      assert drain(t, "k", lim(10, 10.0, 1000)) == 0
      assert drain(t, "k", lim(10, 10.0, 1998)) == 9
    end

    test "no owning process: callers use the public table while its creator is suspended" do
      parent = self()

      owner =
        spawn(fn ->
          send(parent, {:table, TB.new()})
          Process.sleep(:infinity)
        end)

      assert_receive {:table, t}
      :erlang.suspend_process(owner)

      try do
        task = Task.async(fn -> TB.take(t, "k", lim(2, 1, 0)) end)
        assert Task.await(task) == {:ok, 1.0}
        assert TB.take(t, "k", lim(2, 1, 0)) == {:ok, 0.0}
        assert TB.take(t, "k", lim(2, 1, 0)) == {:error, :rate_limited}
        assert :ets.info(t, :owner) == owner
      after
        Process.exit(owner, :kill)
      end
    end

    test "buckets are keyed (per origin, user, action): keys are independent" do
      t = TB.new()
      assert drain(t, {:origin, "trongrid"}, lim(3, 1, 0)) == 3
      assert drain(t, {:user, 7}, lim(3, 1, 0)) == 3
      assert drain(t, :login, lim(3, 1, 0)) == 3
    end

    test "the seed's example: burst, then {:error, {:retry_after, ms}}" do
      t = TB.new()
      now = System.monotonic_time(:millisecond)
      limit = [capacity: 30, refill_per_second: 5.0, now_ms: now]

      call = fn ->
        case TB.take(t, "trongrid", limit) do
          {:ok, _remaining} -> :called_upstream
          {:error, :rate_limited} -> {:error, {:retry_after, TB.retry_after(t, "trongrid", limit)}}
        end
      end

      assert Enum.map(1..31, fn _ -> call.() end) ==
               List.duplicate(:called_upstream, 30) ++ [{:error, {:retry_after, 200}}]
    end
  end

  describe "seed: the limit belongs to the caller" do
    test ":capacity is required on every call: ArgumentError names it and says why" do
      t = TB.new()

      for fun <- [&TB.take/3, &TB.peek/3, &TB.retry_after/3] do
        e = assert_raise ArgumentError, fn -> fun.(t, "k", refill_per_second: 1, now_ms: 0) end
        assert e.message =~ ":capacity is required"
        assert e.message =~ "the limit belongs to the caller"
        assert e.message =~ "never read from application environment"
      end
    end

    test ":refill_per_second is required on every call: ArgumentError names it and says why" do
      t = TB.new()

      for fun <- [&TB.take/3, &TB.peek/3, &TB.retry_after/3] do
        e = assert_raise ArgumentError, fn -> fun.(t, "k", capacity: 1, now_ms: 0) end
        assert e.message =~ ":refill_per_second is required"
        assert e.message =~ "every call must pass it"
      end
    end

    test "no KeyError on a missing option (issue 16)" do
      t = TB.new()
      e = catch_error(TB.take(t, "k", []))
      assert %ArgumentError{} = e
    end

    test "limits are never read from application environment" do
      Application.put_env(:tollgate, :capacity, 5)
      Application.put_env(:tollgate, :refill_per_second, 5.0)

      try do
        assert_raise ArgumentError, ~r/:capacity/, fn -> TB.take(TB.new(), "k", now_ms: 0) end
      after
        Application.delete_env(:tollgate, :capacity)
        Application.delete_env(:tollgate, :refill_per_second)
      end
    end

    test "one table holds buckets with different limits" do
      t = TB.new()
      assert drain(t, "small", lim(2, 1, 0)) == 2
      assert drain(t, "large", lim(50, 1, 0)) == 50
      assert TB.peek(t, "small", lim(2, 1, 1000)) == 1.0
      assert TB.peek(t, "large", lim(50, 10, 1000)) == 10.0
    end

    test "a smaller :capacity later clamps the key's stored tokens down to it" do
      t = TB.new()
      assert {:ok, 9.0} = TB.take(t, "k", lim(10, 1, 0))
      assert TB.peek(t, "k", lim(3, 1, 0)) == 3.0
      assert {:ok, 2.0} = TB.take(t, "k", lim(3, 1, 0))
      # the stored value is now the clamped one
      assert TB.peek(t, "k", lim(10, 1, 0)) == 2.0
    end
  end

  describe "seed: time" do
    test "refill comes from elapsed milliseconds; fractional tokens survive across calls" do
      t = TB.new()
      assert {:ok, +0.0} = TB.take(t, "k", lim(1, 1.0, 0))
      assert TB.peek(t, "k", lim(1, 1.0, 300)) == 0.3
      assert TB.take(t, "k", lim(1, 1.0, 300)) == {:error, :rate_limited}
      assert TB.take(t, "k", lim(1, 1.0, 999)) == {:error, :rate_limited}
      assert TB.take(t, "k", lim(1, 1.0, 1000)) == {:ok, 0.0}
      assert {:ok, 0.25} = TB.take(t, "f", [cost: 0.25] ++ lim(0.5, 1.0, 0))
      assert {:ok, +0.0} = TB.take(t, "f", [cost: 0.25] ++ lim(0.5, 1.0, 0))
      assert TB.take(t, "f", [cost: 0.25] ++ lim(0.5, 1.0, 250)) == {:ok, 0.0}
    end

    test ":now_ms defaults to System.monotonic_time(:millisecond)" do
      t = TB.new()
      t0 = System.monotonic_time(:millisecond)
      # emptied 5 s ago on the monotonic clock, refilling 1 token a second
      assert {:ok, +0.0} = TB.take(t, "k", capacity: 10, refill_per_second: 1.0, cost: 10, now_ms: t0 - 5_000)
      got = TB.peek(t, "k", capacity: 10, refill_per_second: 1.0)
      assert got >= 5.0 and got < 6.0
      assert {:ok, left} = TB.take(t, "k", capacity: 10, refill_per_second: 1.0)
      assert left >= 4.0 and left < 5.0
      w = TB.retry_after(t, "k", capacity: 10, refill_per_second: 1.0, cost: 10)
      assert w > 5_000 and w <= 6_000
    end

    test "the default clock is read on every call" do
      t = TB.new()
      opts = [capacity: 1, refill_per_second: 1000.0]
      assert {:ok, +0.0} = TB.take(t, "k", opts)
      Process.sleep(5)
      assert {:ok, _} = TB.take(t, "k", opts)
    end

    test "the issue's call with no :now_ms: take(table, key, capacity: 10, refill_per_second: 10.0)" do
      t = TB.new()
      assert {:ok, 9.0} = TB.take(t, "k", capacity: 10, refill_per_second: 10.0)
      assert TB.retry_after(t, "k", capacity: 10, refill_per_second: 10.0) == 0
      assert is_float(TB.peek(t, "k", capacity: 10, refill_per_second: 10.0))
    end

    test "pass :now_ms to supply the clock: deterministic without sleeping" do
      t = TB.new()
      assert {:ok, 0.0} = TB.take(t, "k", lim(1, 1.0, 10_000_000))
      assert TB.take(t, "k", lim(1, 1.0, 10_000_999)) == {:error, :rate_limited}
      assert TB.take(t, "k", lim(1, 1.0, 10_001_000)) == {:ok, 0.0}
    end

    test "a :now_ms that moves backwards is clamped to zero elapsed: it never drains a bucket" do
      t = TB.new()
      assert {:ok, 7.0} = TB.take(t, "k", [cost: 3] ++ lim(10, 1, 5_000))
      assert TB.peek(t, "k", lim(10, 1, 0)) == 7.0
      assert TB.peek(t, "k", lim(10, 1, -9_223_372_036_854_775_808)) == 7.0
      assert TB.retry_after(t, "k", [cost: 7] ++ lim(10, 1, 1_000)) == 0
      assert {:ok, 6.0} = TB.take(t, "k", lim(10, 1, 1_000))
    end
  end

  describe "seed: functions" do
    test "new/1: public, owned by the caller, lives exactly as long as that process" do
      parent = self()

      owner =
        dead_process(fn ->
          t = TB.new(:my_buckets)
          send(parent, {:table, t, :ets.info(t, :protection), :ets.info(t, :owner), :ets.info(t, :name)})
        end)

      assert_received {:table, t, :public, ^owner, :my_buckets}
      assert :ets.info(t) == :undefined
    end

    test "new/1: the name is a label, tables of one name are distinct" do
      a = TB.new(:same)
      b = TB.new(:same)
      assert a != b
      {:ok, _} = TB.take(a, "k", lim(1, 1, 0))
      assert TB.peek(b, "k", lim(1, 1, 0)) == 1.0
      assert is_reference(TB.new())
    end

    test "peek/3: refilled for the time elapsed, not consumed" do
      t = TB.new()
      {:ok, _} = TB.take(t, "k", [cost: 2] ++ lim(2, 1, 0))
      assert TB.peek(t, "k", lim(2, 1, 1500)) == 1.5
      assert TB.peek(t, "k", lim(2, 1, 1500)) == 1.5
      assert TB.take(t, "k", [cost: 1.5] ++ lim(2, 1, 1500)) == {:ok, 0.0}
    end

    test "peek/3: the same options as take/3 except :cost, which is irrelevant (ignored)" do
      t = TB.new()
      assert TB.peek(t, "k", [cost: 99] ++ lim(2, 1, 0)) == 2.0
      assert TB.peek(t, "k", [cost: :nan] ++ lim(2, 1, 0)) == 2.0
      assert_raise ArgumentError, ~r/:capacity/, fn -> TB.peek(t, "k", lim(0, 1, 0)) end
      assert_raise ArgumentError, ~r/:now_ms/, fn -> TB.peek(t, "k", lim(1, 1, 1.5)) end
    end

    test "peek/3 returns a float, also for integer limits" do
      assert TB.peek(TB.new(), "k", lim(3, 1, 0)) === 3.0
    end

    test "reset/2: the next take/3 starts from a full bucket; :ok" do
      t = TB.new()
      assert drain(t, "k", lim(3, 1, 0)) == 3
      assert TB.reset(t, "k") == :ok
      assert drain(t, "k", lim(3, 1, 0)) == 3
      assert TB.reset(t, "never-seen") == :ok
    end

    test "reset_all/1: forgets every bucket in the table; :ok" do
      t = TB.new()
      other = TB.new()
      for k <- 1..5, do: {:ok, _} = TB.take(t, k, lim(1, 1, 0))
      {:ok, _} = TB.take(other, 1, lim(1, 1, 0))
      assert TB.reset_all(t) == :ok
      for k <- 1..5, do: assert(TB.take(t, k, lim(1, 1, 0)) == {:ok, 0.0})
      assert TB.take(other, 1, lim(1, 1, 0)) == {:error, :rate_limited}
    end

    test "retry_after/3: milliseconds until :cost tokens are available, rounded up" do
      t = TB.new()
      {:ok, _} = TB.take(t, "k", [cost: 3] ++ lim(3, 3.0, 0))
      # 1 token takes 333.33 ms: rounded up to 334
      assert TB.retry_after(t, "k", lim(3, 3.0, 0)) == 334
      assert TB.take(t, "k", lim(3, 3.0, 333)) == {:error, :rate_limited}
      assert {:ok, _} = TB.take(t, "k", lim(3, 3.0, 334))
      # 0.002 left: 2.998 more take 999.33 ms
      assert TB.retry_after(t, "k", [cost: 3] ++ lim(3, 3.0, 334)) == 1000
    end

    test "retry_after/3: 0 when the bucket already covers the cost (a Retry-After without a branch)" do
      t = TB.new()
      assert TB.retry_after(t, "unseen", lim(3, 1, 0)) == 0
      {:ok, _} = TB.take(t, "k", lim(3, 1, 0))
      assert TB.retry_after(t, "k", [cost: 2] ++ lim(3, 1, 0)) == 0
      assert TB.retry_after(t, "k", [cost: 3] ++ lim(3, 1, 0)) == 1000
    end

    test "retry_after/3: the same options as take/3 (:cost counts and is checked)" do
      t = TB.new()

      assert_raise ArgumentError, ~r/:cost.*must not exceed :capacity/, fn ->
        TB.retry_after(t, "k", [cost: 4] ++ lim(3, 1, 0))
      end

      assert_raise ArgumentError, ~r/^:capacity is required/, fn ->
        TB.retry_after(t, "k", refill_per_second: 1)
      end
    end

    test "take/3: refills for the time elapsed first" do
      t = TB.new()
      {:ok, _} = TB.take(t, "k", [cost: 2] ++ lim(2, 1, 0))
      assert TB.take(t, "k", lim(2, 1, 1000)) == {:ok, 0.0}
    end

    test "take/3: {:ok, remaining} as a float when covered, {:error, :rate_limited} when not" do
      t = TB.new()
      assert TB.take(t, "k", lim(2, 1, 0)) === {:ok, 1.0}
      assert TB.take(t, "k", lim(2, 1, 0)) === {:ok, 0.0}
      assert TB.take(t, "k", lim(2, 1, 0)) === {:error, :rate_limited}
    end

    test "take/3: a bucket never seen starts full" do
      t = TB.new()
      assert TB.take(t, "k", [cost: 30] ++ lim(30, 0.001, 0)) == {:ok, 0.0}
    end

    test "option :capacity: a positive number of tokens (integer or float)" do
      t = TB.new()
      assert {:ok, 2.5} = TB.take(t, "a", lim(3.5, 1, 0))
      assert {:ok, 2.0} = TB.take(t, "b", lim(3, 1, 0))

      for bad <- [0, 0.0, -0.0, -1, -2.5, :nan, :infinity, :neg_infinity, "3", nil, 10 ** 400] do
        e = assert_raise ArgumentError, fn -> TB.take(t, "c", lim(bad, 1, 0)) end
        assert e.message =~ ":capacity must be a positive number, got: #{inspect(bad)}"
      end
    end

    test "option :refill_per_second: a positive number of tokens per second" do
      t = TB.new()
      assert {:ok, _} = TB.take(t, "a", lim(1, 2, 0))

      for bad <- [0, -0.0, -1, :nan, :infinity, "1"] do
        e = assert_raise ArgumentError, fn -> TB.take(t, "a", lim(1, bad, 0)) end
        assert e.message =~ ":refill_per_second must be a positive number"
      end
    end

    test "option :cost: defaults to 1, must not exceed :capacity" do
      t = TB.new()
      assert TB.take(t, "a", lim(5, 1, 0)) == {:ok, 4.0}
      assert TB.take(t, "b", [cost: 5] ++ lim(5, 1, 0)) == {:ok, 0.0}
      e = assert_raise ArgumentError, fn -> TB.take(t, "c", [cost: 5.5] ++ lim(5, 1, 0)) end
      assert e.message =~ ":cost must not exceed :capacity"
      assert e.message =~ "could never be taken"
      # the default cost 1 exceeds a capacity of 0.5
      assert_raise ArgumentError, ~r/:cost/, fn -> TB.take(t, "d", lim(0.5, 1, 0)) end
      assert :ets.info(t, :size) == 2
    end

    test "option :now_ms: monotonic milliseconds, an integer" do
      t = TB.new()

      for bad <- [1.0, "0", :now, 9_223_372_036_854_775_808, -9_223_372_036_854_775_809] do
        e = assert_raise ArgumentError, fn -> TB.take(t, "k", lim(1, 1, bad)) end
        assert e.message =~ ":now_ms must be an integer"
      end

      assert {:ok, _} = TB.take(t, "k", lim(1, 1, -9_223_372_036_854_775_808))
      assert {:ok, _} = TB.take(t, "k", lim(1, 1, 9_223_372_036_854_775_807))
    end

    test "options must be a keyword list" do
      assert_raise ArgumentError, ~r/options must be a keyword list/, fn -> TB.take(TB.new(), "k", %{capacity: 1}) end
    end
  end

  describe "departures from the seed" do
    test "T4: a stale clock does not move the stored timestamp back (no interval credited twice)" do
      t = TB.new()
      # emptied at 1100 ms, 10 tokens/s: by 1300 ms two tokens can accrue
      assert drain(t, "k", lim(10, 10, 1100)) == 10
      assert {:ok, 1.0} = TB.take(t, "k", lim(10, 10, 1300))
      # a caller whose reading is older commits after the newer one
      assert {:ok, +0.0} = TB.take(t, "k", lim(10, 10, 1150))
      # the seed stored 1150 and now credits 1150..1300 a second time
      assert TB.take(t, "k", lim(10, 10, 1300)) == {:error, :rate_limited}
      assert TB.peek(t, "k", lim(10, 10, 1300)) == 0.0
      assert TB.retry_after(t, "k", lim(10, 10, 1300)) == 100
    end

    test "T4/T5: alternating the clock between 1000 and 0 admits no more than the bound" do
      t = TB.new()

      admitted =
        Enum.count(1..40, fn i ->
          now = if rem(i, 2) == 1, do: 0, else: 1000
          match?({:ok, _}, TB.take(t, "k", lim(10, 10, now)))
        end)

      # 1 at 0 ms, 10 more once 1000 ms has accrued, and no second credit for
      # the same second; T5's bound is capacity + rate * (1000 - 0) / 1000 = 20.
      # A stored clock that goes back (the seed) re-credits every second
      # take: all 40 are admitted.
      assert admitted == 11
      assert admitted <= 20
    end

    test "T2: a refusal writes nothing (the clamp of a smaller capacity is not stored by it)" do
      t = TB.new()
      {:ok, 6.0} = TB.take(t, "k", [cost: 4] ++ lim(10, 1, 0))
      before = :ets.tab2list(t)
      assert TB.take(t, "k", [cost: 3] ++ lim(3, 1, 0)) == {:ok, 0.0}
      :ets.delete_all_objects(t)
      :ets.insert(t, before)
      assert TB.take(t, "k", [cost: 7] ++ lim(10, 1, 500)) == {:error, :rate_limited}
      assert :ets.tab2list(t) == before
      assert TB.peek(t, "k", lim(10, 1, 500)) == 6.5
    end

    test "T7: retry_after is the smallest wait that works, not the closed form" do
      t = TB.new()
      rate = 11.666666666666666
      {:ok, +0.0} = TB.take(t, "k", [cost: 8] ++ lim(8, rate, 0))
      have = TB.peek(t, "k", lim(8, rate, 1))
      assert Float.ceil((7 - have) / rate * 1000) == 599.0
      assert TB.retry_after(t, "k", [cost: 7] ++ lim(8, rate, 1)) == 600
      assert TB.take(t, "k", [cost: 7] ++ lim(8, rate, 600)) == {:error, :rate_limited}
      assert {:ok, _} = TB.take(t, "k", [cost: 7] ++ lim(8, rate, 601))
    end

    test "T7: a wait beyond the int64 clock answers never/0" do
      t = TB.new()
      {:ok, +0.0} = TB.take(t, "k", lim(1, 5.0e-324, 0))
      assert TB.retry_after(t, "k", lim(1, 5.0e-324, 0)) == TB.never()
      assert TB.never() == 9_223_372_036_854_775_807
    end

    test "T7: from a stale clock the wait counts from the stored timestamp" do
      t = TB.new()
      {:ok, +0.0} = TB.take(t, "k", [cost: 10] ++ lim(10, 10, 5000))
      assert TB.retry_after(t, "k", lim(10, 10, 4000)) == 1100
      assert TB.retry_after(t, "k", lim(10, 10, 5000)) == 100
    end

    test "T9: the first failing option is named, in the order capacity, refill_per_second, cost" do
      t = TB.new()
      assert_raise ArgumentError, ~r/^:capacity must/, fn -> TB.take(t, "k", [cost: :nan] ++ lim(:nan, :nan, 0)) end

      assert_raise ArgumentError, ~r/^:refill_per_second must/, fn ->
        TB.take(t, "k", [cost: :nan] ++ lim(1, :nan, 0))
      end

      assert_raise ArgumentError, ~r/^:cost must/, fn -> TB.take(t, "k", [cost: :nan] ++ lim(1, 1, 0)) end
      assert_raise ArgumentError, ~r/^:cost must/, fn -> TB.take(t, "k", [cost: -0.0] ++ lim(1, 1, 0)) end
      assert :ets.info(t, :size) == 0
    end

    test "T9: subnormal values are finite and positive, so valid" do
      t = TB.new()
      assert {:ok, +0.0} = TB.take(t, "k", [cost: 5.0e-324] ++ lim(5.0e-324, 5.0e-324, 0))
    end

    test "T3: a float overflow in the refill means capacity, not an ArithmeticError" do
      t = TB.new()
      max = 1.7976931348623157e308
      assert {:ok, +0.0} = TB.take(t, "k", [cost: max] ++ lim(max, max, 0))
      assert TB.peek(t, "k", lim(max, max, 2000)) == max
    end

    test "T3: elapsed is exact over the whole int64 range" do
      t = TB.new()
      {:ok, +0.0} = TB.take(t, "k", lim(1, 1.0e-18, -9_223_372_036_854_775_808))
      # elapsed 2^64 - 1 ms, as a float 1.8446744073709552e19
      assert TB.peek(t, "k", lim(1, 1.0e-18, 9_223_372_036_854_775_807)) ==
               1.8446744073709552e19 / 1000 * 1.0e-18
    end
  end

  describe "T12: reclaim/2 (the seed has none)" do
    defp reclaim(t, cap, rate, now), do: TB.reclaim(t, lim(cap, rate, now))

    # The bucket rows (the floor row is the one whose key is not a binary).
    defp buckets(t), do: for({k, _, _, _} <- :ets.tab2list(t), is_binary(k), do: :erlang.binary_to_term(k))

    test "forgets exactly the buckets full at its clock, counts them, and they come back full" do
      t = TB.new()
      {:ok, +0.0} = TB.take(t, "empty", [cost: 4] ++ lim(4, 1, 0))
      {:ok, 3.0} = TB.take(t, "one-short", lim(4, 1, 0))
      {:ok, 3.5} = TB.take(t, :half, [cost: 0.5] ++ lim(4, 1, 500))
      {:ok, 3.0} = TB.take(t, {:"$1"}, lim(4, 1, 0))
      # at 1000 ms: "one-short" and {:"$1"} are full (3 + 1), :half is 3.5 + 0.5 = 4 too,
      # "empty" holds 1
      assert reclaim(t, 4, 1, 1000) == 3
      assert buckets(t) == ["empty"]
      assert TB.peek(t, "empty", lim(4, 1, 1000)) == 1.0
      for k <- ["one-short", :half, {:"$1"}], do: assert(TB.peek(t, k, lim(4, 1, 1000)) == 4.0)
      # nothing left to forget at 1000 ms; at 4000 ms "empty" is full
      assert reclaim(t, 4, 1, 1000) == 0
      assert reclaim(t, 4, 1, 4000) == 1
      assert buckets(t) == []
      assert TB.take(t, "empty", [cost: 4] ++ lim(4, 1, 4000)) == {:ok, 0.0}
    end

    test "full means exactly capacity by the refill formula, with the reclaim's limits" do
      t = TB.new()
      {:ok, _} = TB.take(t, "k", [cost: 0.1] ++ lim(1, 0.1, 0))
      # 0.9 + 0.999 * 0.1 = 0.9999 is not 1
      assert reclaim(t, 1, 0.1, 999) == 0
      assert reclaim(t, 1, 0.1, 1000) == 1
      {:ok, _} = TB.take(t, "k", lim(10, 1, 1000))
      # 9 tokens: full by a capacity of 9, or by a rate that refills it sooner
      assert reclaim(t, 10, 1, 1000) == 0
      assert reclaim(t, 9, 1, 1000) == 1
    end

    test "the floor stamps a stale take on a forgotten key: its accrued time is not credited again" do
      t = TB.new()
      {:ok, +0.0} = TB.take(t, "k", [cost: 10] ++ lim(10, 10, 1000))
      assert reclaim(t, 10, 10, 2000) == 1
      # stamped 2000 ms, not 0 ms
      assert TB.take(t, "k", [cost: 10] ++ lim(10, 10, 0)) == {:ok, 0.0}
      assert TB.take(t, "k", lim(10, 10, 2000)) == {:error, :rate_limited}
      assert TB.peek(t, "k", lim(10, 10, 2100)) == 1.0
      assert TB.retry_after(t, "k", lim(10, 10, 2000)) == 100
    end

    test "the floor stamps a stale take on a key never seen" do
      t = TB.new()
      assert reclaim(t, 10, 10, 2000) == 0
      assert TB.take(t, "new", [cost: 10] ++ lim(10, 10, 0)) == {:ok, 0.0}
      assert TB.take(t, "new", lim(10, 10, 2000)) == {:error, :rate_limited}
      assert TB.peek(t, "new", lim(10, 10, 2000)) == 0.0
      # a take with a newer clock than the floor keeps its own
      assert TB.take(t, "newer", [cost: 10] ++ lim(10, 10, 3000)) == {:ok, 0.0}
      assert TB.peek(t, "newer", lim(10, 10, 3100)) == 1.0
    end

    test "an older clock neither lowers the floor nor forgets buckets stamped after it" do
      t = TB.new()
      assert reclaim(t, 2, 1, 5000) == 0
      {:ok, 1.0} = TB.take(t, "k", lim(2, 1, 5000))
      # full by a capacity of 1, but stamped after 3000 ms
      assert reclaim(t, 1, 1, 3000) == 0
      assert TB.peek(t, "k", lim(2, 1, 5000)) == 1.0
      # the floor is still 5000 ms: a take at 0 ms on a new key is stamped 5000 ms
      {:ok, +0.0} = TB.take(t, "j", [cost: 2] ++ lim(2, 1, 0))
      assert TB.peek(t, "j", lim(2, 1, 5000)) == 0.0
      assert TB.peek(t, "j", lim(2, 1, 6000)) == 1.0
      # by its own clock, a newer reclaim forgets both and raises the floor
      assert reclaim(t, 2, 1, 7000) == 2
      {:ok, +0.0} = TB.take(t, "k", [cost: 2] ++ lim(2, 1, 5000))
      assert TB.peek(t, "k", lim(2, 1, 7000)) == 0.0
    end

    test "reset keeps the floor; reset_all clears it" do
      t = TB.new()
      assert reclaim(t, 2, 1, 3000) == 0
      {:ok, 1.0} = TB.take(t, "k", lim(2, 1, 3000))
      assert TB.reset(t, "k") == :ok
      {:ok, +0.0} = TB.take(t, "k", [cost: 2] ++ lim(2, 1, 0))
      assert TB.take(t, "k", lim(2, 1, 3000)) == {:error, :rate_limited}
      assert TB.reset_all(t) == :ok
      assert :ets.info(t, :size) == 0
      {:ok, +0.0} = TB.take(t, "k", [cost: 2] ++ lim(2, 1, 0))
      # stamped 0 ms: by 2000 ms it is full again
      assert TB.take(t, "k", [cost: 2] ++ lim(2, 1, 2000)) == {:ok, 0.0}
    end

    test "bad limits raise as take/3's do, in the order capacity, refill_per_second, and change nothing" do
      t = TB.new()
      {:ok, +0.0} = TB.take(t, "k", lim(1, 1000, 0))
      before = :ets.tab2list(t)

      for bad <- [0, -1, -0.0, :nan, :infinity, "1"] do
        e = assert_raise ArgumentError, fn -> reclaim(t, bad, :nan, 5000) end
        assert e.message == ":capacity must be a positive number, got: #{inspect(bad)} (reclaim: a finite number > 0)"
        e = assert_raise ArgumentError, fn -> reclaim(t, 1, bad, 5000) end
        assert e.message =~ "reclaim: a finite number > 0"
      end

      assert_raise ArgumentError, ~r/^:capacity is required .*reclaim/, fn ->
        TB.reclaim(t, refill_per_second: 1)
      end

      assert_raise ArgumentError, ~r/^:refill_per_second is required .*reclaim/, fn ->
        TB.reclaim(t, capacity: 1)
      end

      assert_raise ArgumentError, ~r/^:now_ms must be an integer.*\(reclaim\)$/, fn ->
        TB.reclaim(t, capacity: 1, refill_per_second: 1, now_ms: 1.0)
      end

      assert_raise ArgumentError, ~r/options must be a keyword list/, fn -> TB.reclaim(t, %{capacity: 1}) end
      # no floor was raised either: a stale take is stamped with its own clock
      assert :ets.tab2list(t) == before
      # a cost is ignored, even one above capacity
      assert TB.reclaim(t, cost: 5, capacity: 1, refill_per_second: 1000, now_ms: 5000) == 1
    end

    test ":now_ms defaults to the monotonic clock" do
      t = TB.new()
      now = System.monotonic_time(:millisecond)
      {:ok, 1.0} = TB.take(t, "k", capacity: 2, refill_per_second: 1, now_ms: now - 10_000)
      assert TB.reclaim(t, capacity: 2, refill_per_second: 1) == 1
      # the floor is at least now: a stale take is stamped there
      {:ok, +0.0} = TB.take(t, "k", capacity: 2, refill_per_second: 1, cost: 2, now_ms: now - 10_000)
      assert TB.peek(t, "k", capacity: 2, refill_per_second: 1, now_ms: now) == 0.0
    end

    test "the floor row is no user key: keys that look like it stay buckets" do
      t = TB.new()
      assert reclaim(t, 1, 1, 100) == 0

      for k <- [:floor, {:floor}, "floor", :_] do
        assert TB.take(t, k, lim(1, 1, 0)) == {:ok, 0.0}
        assert TB.take(t, k, lim(1, 1, 100)) == {:error, :rate_limited}
      end

      assert Enum.sort(buckets(t)) == Enum.sort([:floor, {:floor}, "floor", :_])
      assert reclaim(t, 1, 1, 1100) == 4
      assert buckets(t) == []
    end
  end

  describe "keys are terms (spec T8)" do
    @keys [:_, :"$1", {:"$1"}, {:_, :_}, [:"$2" | :_], {:const, :x}, "a", 1, 1.0, %{:_ => 1}, {:"$$"}]

    test "keys that are match-spec patterns stay literal and independent" do
      t = TB.new()

      for {k, i} <- Enum.with_index(@keys) do
        # the first take inserts the row, the second swaps it
        assert {:ok, left} = TB.take(t, k, [cost: 0.5] ++ lim(20, 1, 0))
        assert left == 19.5
        assert {:ok, left} = TB.take(t, k, [cost: i + 0.5] ++ lim(20, 1, 0))
        assert left == 19.0 - i
      end

      for {k, i} <- Enum.with_index(@keys) do
        assert TB.peek(t, k, lim(20, 1, 0)) == 19.0 - i
        assert TB.retry_after(t, k, [cost: 20] ++ lim(20, 1, 0)) == (i + 1) * 1000
      end

      assert TB.reset(t, :_) == :ok
      assert TB.peek(t, :_, lim(20, 1, 0)) == 20.0
      assert TB.peek(t, {:"$1"}, lim(20, 1, 0)) == 17.0
      assert TB.reset(t, {:"$1"}) == :ok
      assert TB.peek(t, :"$1", lim(20, 1, 0)) == 18.0
      assert :ets.info(t, :size) == length(@keys) - 2
    end

    test "a key :_ drains only its own bucket" do
      t = TB.new()
      assert drain(t, :_, lim(3, 1, 0)) == 3
      assert drain(t, "other", lim(3, 1, 0)) == 3
      assert drain(t, {:"$1"}, lim(3, 1, 0)) == 3
    end

    test "why: the seed's match head with the key :_ in it is not a compare-and-swap of one row" do
      t = :ets.new(:naive, [:set, :public])
      :ets.insert(t, {"other", 5.0, 0})
      :ets.insert(t, {:_, 5.0, 0})
      # the replacement would not keep the key, so ETS refuses the spec
      assert_raise ArgumentError, fn -> :ets.select_replace(t, [{{:_, 5.0, 0}, [], [{:const, {:_, 4.0, 0}}]}]) end
      # and {:"$1"} is a pattern that matches (and rewrites) another key's row
      :ets.insert(t, {{:"$1"}, 5.0, 0})
      :ets.insert(t, {{"x"}, 5.0, 0})
      assert :ets.select_replace(t, [{{{:"$1"}, 5.0, 0}, [], [{{{{:"$1"}}, 4.0, 0}}]}]) == 2
    end
  end
end
