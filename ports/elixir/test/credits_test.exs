defmodule Tollgate.CreditsTest do
  # One test (or a few) per sentence of the seed's documentation
  # (shared/seeds/credits.md), then the departures of spec/credits.md §7,
  # holders that die and dead tables.
  use ExUnit.Case, async: true
  alias Tollgate.Credits

  defp row(t, n), do: hd(:ets.lookup(t, n))

  defp payload(body \\ %{path: "/rpc"}), do: {make_ref(), body, 5_000}

  # Runs fun in a process of its own and waits until that process is dead;
  # answers what fun returned.
  defp in_dead_process(fun) do
    parent = self()
    {pid, ref} = spawn_monitor(fn -> send(parent, {:result, self(), fun.()}) end)
    assert_receive {:result, ^pid, result}, 5_000
    assert_receive {:DOWN, ^ref, :process, ^pid, _}, 5_000
    result
  end

  # A process that runs funs sent to it until killed.
  defp holder do
    spawn(fn -> holder_loop() end)
  end

  defp holder_loop do
    receive do
      {:run, from, fun} ->
        send(from, {:ran, self(), fun.()})
        holder_loop()
    end
  end

  defp as(pid, fun) do
    send(pid, {:run, self(), fun})
    assert_receive {:ran, ^pid, result}, 5_000
    result
  end

  defp kill(pid) do
    ref = Process.monitor(pid)
    Process.exit(pid, :kill)
    assert_receive {:DOWN, ^ref, :process, ^pid, _}, 5_000
  end

  # A table whose owner process has died.
  defp dead_table do
    t = in_dead_process(fn -> Credits.new() end)
    assert :ets.info(t) == :undefined
    t
  end

  describe "seed moduledoc" do
    test "a fixed slot table of 32 rows that also hold the bounded request payload" do
      t = Credits.new()
      assert :ets.info(t, :size) == 32
      {:ok, {n, e} = tok} = Credits.reserve(t, :general)
      p = payload()
      :ok = Credits.enqueue(t, tok, p)
      assert {^n, :enqueued, :general, pid, ^e, _marked, ^p} = row(t, n)
      assert pid == self()
    end

    test "no caller → owner message: the owner's mailbox stays empty, it polls enqueued/1" do
      parent = self()

      owner =
        spawn(fn ->
          t = Credits.new()
          send(parent, {:table, t})

          receive do
            :poll -> send(parent, {:polled, Credits.enqueued(t), Process.info(self(), :message_queue_len)})
          end
        end)

      assert_receive {:table, t}
      {:ok, tok} = Credits.reserve(t, :general)
      :ok = Credits.enqueue(t, tok, :req)
      send(owner, :poll)
      assert_receive {:polled, [{1, _, _, :req}], {:message_queue_len, 0}}
    end

    test "reserve: {n, :free, class, 0, 0, 0, nil} → {n, :reserved, class, pid, epoch, 0, nil}" do
      t = Credits.new()
      assert row(t, 1) == {1, :free, :general, 0, 0, 0, nil}
      assert row(t, 27) == {27, :free, :internal, 0, 0, 0, nil}
      {:ok, {1, e}} = Credits.reserve(t, :general)
      assert row(t, 1) == {1, :reserved, :general, self(), e, 0, nil}
    end

    test "epoch is a unique reservation identity (never reused, also after the slot is freed)" do
      t = Credits.new()

      epochs =
        for _ <- 1..2_000 do
          {:ok, {1, e} = tok} = Credits.reserve(t, :general)
          :ok = Credits.release(t, tok)
          e
        end

      assert length(Enum.uniq(epochs)) == 2_000
      assert Enum.all?(epochs, &(is_integer(&1) and &1 > 0))
    end

    test "every transition matches {n, epoch}: a release cannot be replayed or land on a recycled slot" do
      t = Credits.new()
      {:ok, {1, _} = old} = Credits.reserve(t, :general)
      :ok = Credits.release(t, old)
      {:ok, {1, _} = new} = Credits.reserve(t, :general)
      before = row(t, 1)
      assert Credits.release(t, old) == :ok
      assert Credits.release_count(t, old) == 0
      assert Credits.enqueue(t, old, :stale) == {:error, :lost}
      assert Credits.finish_count(t, old) == 0
      assert Credits.take(t, 1, elem(old, 1)) == :none
      assert row(t, 1) == before
      assert Credits.release_count(t, new) == 1
    end

    test "enqueue: one CAS from {n, :reserved, _, self(), epoch, _, nil}, the payload installed in the same write" do
      t = Credits.new()
      {:ok, {n, e} = tok} = Credits.reserve(t, :general)
      p = payload()
      assert Credits.enqueue(t, tok, p, now_ms: 42) == :ok
      assert row(t, n) == {n, :enqueued, :general, self(), e, 42, p}
    end

    test "enqueue: only the reserving process (self()) matches" do
      t = Credits.new()
      {:ok, tok} = Credits.reserve(t, :general)
      assert in_dead_process(fn -> Credits.enqueue(t, tok, :intruder) end) == {:error, :lost}
      assert elem(row(t, 1), 1) == :reserved
      assert Credits.enqueue(t, tok, :mine) == :ok
    end

    test "enqueue: the payload is data ({:const, payload}), even when it looks like a match expression" do
      t = Credits.new()

      for p <- [
            :_,
            :"$1",
            {:const, nil},
            {:"$1", :"$2"},
            [:_ | :"$3"],
            %{:_ => :"$1"},
            {make_ref(), %{:"$1" => :_}, -1}
          ] do
        {:ok, {n, e} = tok} = Credits.reserve(t, :general)
        assert Credits.enqueue(t, tok, p) == :ok
        assert Credits.take(t, n, e) == {:ok, p}
        assert elem(row(t, n), 6) === p
        :ok = Credits.finish(t, tok)
      end
    end

    test "a reserved row never holds a payload and an enqueued row always does (observed concurrently)" do
      t = Credits.new()
      parent = self()

      observer =
        spawn(fn ->
          bad =
            Enum.flat_map(1..20_000, fn _ ->
              for {_, s, _, _, _, _, p} = r <- :ets.tab2list(t),
                  (s in [:free, :reserved] and p != nil) or (s in [:enqueued, :processing] and p == nil),
                  do: r
            end)

          send(parent, {:bad, bad})
        end)

      workers =
        for w <- 1..4 do
          Task.async(fn ->
            for i <- 1..500 do
              {:ok, {n, e} = tok} = Credits.reserve(t, :general)
              :ok = Credits.enqueue(t, tok, {w, i})
              {:ok, {^w, ^i}} = Credits.take(t, n, e)
              :ok = Credits.finish(t, tok)
            end
          end)
        end

      Enum.each(workers, &Task.await(&1, 30_000))
      assert_receive {:bad, []}, 60_000
      refute Process.alive?(observer)
    end

    test "a holder that dies after reserve leaves a sweepable reserved/nil row and nothing more" do
      t = Credits.new()
      {n, e} = in_dead_process(fn -> elem(Credits.reserve(t, :general), 1) end)
      assert {^n, :reserved, :general, _dead, ^e, 0, nil} = row(t, n)
      assert Credits.snapshot(t).general.reserved == 1
      assert Credits.sweep(t) == 1
      assert row(t, n) == {n, :free, :general, 0, 0, 0, nil}
    end

    test "a stale token cannot match: the epoch pin fails on any recycled slot, nothing is overwritten" do
      t = Credits.new()
      {:ok, old} = Credits.reserve(t, :general)
      :ok = Credits.enqueue(t, old, :first)
      {:ok, :first} = Credits.take(t, 1, elem(old, 1))
      :ok = Credits.finish(t, old)
      {:ok, {1, e2} = new} = Credits.reserve(t, :general)
      assert Credits.enqueue(t, old, :stomp) == {:error, :lost}
      assert row(t, 1) == {1, :reserved, :general, self(), e2, 0, nil}
      :ok = Credits.enqueue(t, new, :second)
      assert Credits.take(t, 1, elem(old, 1)) == :none
      :ok = Credits.finish(t, old)
      assert Credits.take(t, 1, e2) == {:ok, :second}
    end

    test "take: the owner's CAS enqueued → processing, returning the payload; finish: processing → free" do
      t = Credits.new()
      {:ok, {n, e} = tok} = Credits.reserve(t, :general)
      p = payload()
      :ok = Credits.enqueue(t, tok, p)
      assert Credits.take(t, n, e) == {:ok, p}
      assert {^n, :processing, :general, _, ^e, _, ^p} = row(t, n)
      assert Credits.finish(t, tok) == :ok
      assert row(t, n) == {n, :free, :general, 0, 0, 0, nil}
    end

    test "the credit covers queueing and processing, also when the caller dies or times out" do
      t = Credits.new()

      tok =
        in_dead_process(fn ->
          {:ok, tok} = Credits.reserve(t, :general)
          :ok = Credits.enqueue(t, tok, :orphaned_request)
          tok
        end)

      {n, e} = tok
      assert Credits.sweep(t) == 0
      assert elem(row(t, n), 1) == :enqueued
      assert Credits.take(t, n, e) == {:ok, :orphaned_request}
      assert Credits.sweep(t) == 0
      assert elem(row(t, n), 1) == :processing
      assert Credits.finish(t, tok) == :ok
      assert Credits.snapshot(t).general.free == 26
    end

    test "release: a caller-side free of a reservation never enqueued, never of an enqueued or processing row" do
      t = Credits.new()
      {:ok, a} = Credits.reserve(t, :general)
      assert Credits.release(t, a) == :ok
      assert elem(row(t, 1), 1) == :free

      {:ok, {n, e} = b} = Credits.reserve(t, :general)
      :ok = Credits.enqueue(t, b, :req)
      assert Credits.release(t, b) == :ok
      assert elem(row(t, n), 1) == :enqueued
      {:ok, :req} = Credits.take(t, n, e)
      assert Credits.release(t, b) == :ok
      assert elem(row(t, n), 1) == :processing
    end

    test "sweep: frees reserved rows of dead holders only; enqueued and processing rows are never swept" do
      t = Credits.new()
      live = holder()
      {:ok, _} = as(live, fn -> Credits.reserve(t, :general) end)
      dying = holder()
      {:ok, r} = as(dying, fn -> Credits.reserve(t, :general) end)
      {:ok, q} = as(dying, fn -> Credits.reserve(t, :general) end)
      :ok = as(dying, fn -> Credits.enqueue(t, q, :queued) end)
      {:ok, p} = as(dying, fn -> Credits.reserve(t, :internal) end)
      :ok = as(dying, fn -> Credits.enqueue(t, p, :processing) end)
      {:ok, :processing} = Credits.take(t, elem(p, 0), elem(p, 1))

      assert Credits.sweep(t) == 0
      kill(dying)
      assert Credits.sweep(t) == 1
      assert elem(row(t, elem(r, 0)), 1) == :free
      assert elem(row(t, elem(q, 0)), 1) == :enqueued
      assert elem(row(t, elem(p, 0)), 1) == :processing
      assert Credits.sweep(t) == 0
      assert Credits.snapshot(t).general.reserved == 1
      kill(live)
      assert Credits.sweep(t) == 1
    end

    test "if the owner dies the whole table dies with it" do
      parent = self()

      owner =
        spawn(fn ->
          send(parent, {:table, Credits.new()})
          Process.sleep(:infinity)
        end)

      assert_receive {:table, t}
      {:ok, tok} = Credits.reserve(t, :general)
      :ok = Credits.enqueue(t, tok, :req)
      kill(owner)
      assert :ets.info(t) == :undefined
      assert Credits.enqueued(t) == []
    end

    test "slot keys are flat integers: 1..26 general, 27..32 internal" do
      t = Credits.new()
      assert Enum.sort(for {n, _, _, _, _, _, _} <- :ets.tab2list(t), do: n) == Enum.to_list(1..32)
      general = for _ <- 1..26, do: elem(elem(Credits.reserve(t, :general), 1), 0)
      internal = for _ <- 1..6, do: elem(elem(Credits.reserve(t, :internal), 1), 0)
      assert general == Enum.to_list(1..26)
      assert internal == Enum.to_list(27..32)
      for n <- 1..32, do: assert(elem(row(t, n), 2) == if(n <= 26, do: :general, else: :internal))
    end

    test "slot bound: exactly 32 reserved requests, total (26 general, 6 internal)" do
      t = Credits.new()
      for _ <- 1..26, do: assert({:ok, _} = Credits.reserve(t, :general))
      assert Credits.reserve(t, :general) == {:error, :exhausted}
      for _ <- 1..6, do: assert({:ok, _} = Credits.reserve(t, :internal))
      assert Credits.reserve(t, :internal) == {:error, :exhausted}
      assert Credits.reserve(t, :general) == {:error, :exhausted}

      assert Credits.snapshot(t) == %{
               general: %{free: 0, reserved: 26, enqueued: 0, processing: 0},
               internal: %{free: 0, reserved: 6, enqueued: 0, processing: 0}
             }
    end

    test "dead table: every operation answers :no_table / :none / :ok / 0 / [] / zero counts" do
      t = dead_table()
      tok = {1, 12345}
      assert Credits.reserve(t, :general) == {:error, :no_table}
      assert Credits.reserve(t, :internal) == {:error, :no_table}
      assert Credits.enqueue(t, tok, :p) == {:error, :no_table}
      assert Credits.enqueue(t, tok, :p, now_ms: 1) == {:error, :no_table}
      assert Credits.take(t, 1, 12345) == :none
      assert Credits.finish(t, tok) == :ok
      assert Credits.finish_count(t, tok) == 0
      assert Credits.release(t, tok) == :ok
      assert Credits.release_count(t, tok) == 0
      assert Credits.sweep(t) == 0
      assert Credits.enqueued(t) == []
      zero = %{free: 0, reserved: 0, enqueued: 0, processing: 0}
      assert Credits.snapshot(t) == %{general: zero, internal: zero}
      assert Credits.bounds() == %{general: 26, internal: 6, total: 32}
    end

    test "on a live table an ETS ArgumentError is re-raised, not read as :no_table" do
      parent = self()

      # a live table this process may read but not write, and one it may not read
      owner =
        spawn(fn ->
          prot = :ets.new(:protected, [:set, :protected])
          :ets.insert(prot, for(n <- 1..32, do: {n, :free, if(n <= 26, do: :general, else: :internal), 0, 0, 0, nil}))
          priv = :ets.new(:private, [:set, :private])
          send(parent, {:tables, prot, priv})
          Process.sleep(:infinity)
        end)

      assert_receive {:tables, prot, priv}

      try do
        assert_raise ArgumentError, fn -> Credits.reserve(prot, :general) end
        assert_raise ArgumentError, fn -> Credits.release(prot, {1, 1}) end
        assert_raise ArgumentError, fn -> Credits.sweep(priv) end
        assert_raise ArgumentError, fn -> Credits.enqueued(priv) end
        assert_raise ArgumentError, fn -> Credits.snapshot(priv) end
        assert_raise ArgumentError, fn -> Credits.take(priv, 1, 1) end
      after
        kill(owner)
      end
    end
  end

  describe "seed: functions" do
    test "bounds/0: the declared split" do
      assert Credits.bounds() == %{general: 26, internal: 6, total: 32}
    end

    test "new/0: all slots :free, owned by the caller" do
      t = Credits.new()
      assert :ets.info(t, :owner) == self()
      assert Enum.all?(:ets.tab2list(t), &(elem(&1, 1) == :free))
      assert Credits.snapshot(t).internal.free == 6
    end

    test "reserve/2: {:ok, {n, epoch}} for the calling pid, {:error, :exhausted}" do
      t = Credits.new()
      pid = holder()
      assert {:ok, {1, e}} = as(pid, fn -> Credits.reserve(t, :general) end)
      assert elem(row(t, 1), 3) == pid
      assert is_integer(e) and e > 0
      for _ <- 2..26, do: {:ok, _} = Credits.reserve(t, :general)
      assert Credits.reserve(t, :general) == {:error, :exhausted}
      kill(pid)
    end

    test "enqueue/3: :ok | {:error, :lost}" do
      t = Credits.new()
      {:ok, tok} = Credits.reserve(t, :general)
      assert Credits.enqueue(t, tok, :a) == :ok
      assert Credits.enqueue(t, tok, :b) == {:error, :lost}
      assert Credits.enqueued(t) |> Enum.map(&elem(&1, 3)) == [:a]
    end

    test "enqueue/3 marks the row with System.monotonic_time(:millisecond)" do
      t = Credits.new()
      {:ok, tok} = Credits.reserve(t, :general)
      before = System.monotonic_time(:millisecond)
      :ok = Credits.enqueue(t, tok, :a)
      after_ = System.monotonic_time(:millisecond)
      [{1, _, marked, :a}] = Credits.enqueued(t)
      assert marked >= before and marked <= after_
    end

    test "enqueued/1: {n, epoch, marked_ms, payload}, oldest enqueue first; read-only" do
      t = Credits.new()
      toks = for _ <- 1..3, do: elem(Credits.reserve(t, :general), 1)
      [a, b, c] = toks
      :ok = Credits.enqueue(t, b, :b, now_ms: 10)
      :ok = Credits.enqueue(t, c, :c, now_ms: 20)
      :ok = Credits.enqueue(t, a, :a, now_ms: 30)
      expect = [{2, elem(b, 1), 10, :b}, {3, elem(c, 1), 20, :c}, {1, elem(a, 1), 30, :a}]
      assert Credits.enqueued(t) == expect
      assert Credits.enqueued(t) == expect
      assert Credits.snapshot(t).general.enqueued == 3
    end

    test "enqueued/1 lists only :enqueued rows (consumption is take/3)" do
      t = Credits.new()
      {:ok, a} = Credits.reserve(t, :general)
      {:ok, b} = Credits.reserve(t, :general)
      {:ok, _reserved} = Credits.reserve(t, :general)
      :ok = Credits.enqueue(t, a, :a, now_ms: 1)
      :ok = Credits.enqueue(t, b, :b, now_ms: 2)
      {:ok, :a} = Credits.take(t, elem(a, 0), elem(a, 1))
      assert [{2, _, 2, :b}] = Credits.enqueued(t)
    end

    test "finish/2: frees :processing, and defensively :enqueued, exactly once: a slot listed twice drains once" do
      t = Credits.new()
      {:ok, {n, e} = tok} = Credits.reserve(t, :general)
      :ok = Credits.enqueue(t, tok, :req)
      # listed on one poll, then again on the next before the first was taken
      [{^n, ^e, _, :req}] = Credits.enqueued(t)
      [{^n, ^e, _, :req}] = Credits.enqueued(t)
      assert Credits.finish_count(t, tok) == 1
      assert Credits.take(t, n, e) == :none
      assert Credits.finish_count(t, tok) == 0
      # the slot's next reservation is untouched by the second finish
      {:ok, {^n, _} = next} = Credits.reserve(t, :general)
      :ok = Credits.enqueue(t, next, :next)
      assert Credits.finish(t, tok) == :ok
      assert [{^n, _, _, :next}] = Credits.enqueued(t)
    end

    test "finish/2 and release/2 return :ok whether or not they freed" do
      t = Credits.new()
      {:ok, tok} = Credits.reserve(t, :general)
      assert Credits.finish(t, tok) == :ok
      assert elem(row(t, 1), 1) == :reserved
      assert Credits.release(t, tok) == :ok
      assert Credits.release(t, tok) == :ok
      assert Credits.finish(t, tok) == :ok
    end

    test "release/2: holder-pinned (another process cannot release) and at most once" do
      t = Credits.new()
      {:ok, tok} = Credits.reserve(t, :general)
      assert in_dead_process(fn -> Credits.release_count(t, tok) end) == 0
      assert elem(row(t, 1), 1) == :reserved
      assert Credits.release_count(t, tok) == 1
      assert Credits.release_count(t, tok) == 0
    end

    test "snapshot/1: per-class usage and queue-state counts" do
      t = Credits.new()
      {:ok, a} = Credits.reserve(t, :general)
      {:ok, b} = Credits.reserve(t, :general)
      {:ok, _c} = Credits.reserve(t, :general)
      {:ok, d} = Credits.reserve(t, :internal)
      :ok = Credits.enqueue(t, a, :a)
      :ok = Credits.enqueue(t, b, :b)
      :ok = Credits.enqueue(t, d, :d)
      {:ok, :b} = Credits.take(t, elem(b, 0), elem(b, 1))

      assert Credits.snapshot(t) == %{
               general: %{free: 23, reserved: 1, enqueued: 1, processing: 1},
               internal: %{free: 5, reserved: 0, enqueued: 1, processing: 0}
             }
    end

    test "sweep/1: returns the number reclaimed" do
      t = Credits.new()
      for _ <- 1..3, do: in_dead_process(fn -> {:ok, _} = Credits.reserve(t, :general) end)
      in_dead_process(fn -> {:ok, _} = Credits.reserve(t, :internal) end)
      assert Credits.sweep(t) == 4
      assert Credits.sweep(t) == 0
    end

    test "take/3: {:ok, payload} | :none, at most once" do
      t = Credits.new()
      {:ok, {n, e} = tok} = Credits.reserve(t, :general)
      p = payload()
      :ok = Credits.enqueue(t, tok, p)
      assert Credits.take(t, n, e) == {:ok, p}
      assert Credits.take(t, n, e) == :none
      assert Credits.take(t, n, e + 1) == :none
      assert Credits.take(t, n + 1, e) == :none
    end

    test "the payload type {reference(), map(), integer()} round-trips" do
      t = Credits.new()
      {:ok, {n, e} = tok} = Credits.reserve(t, :internal)
      p = {ref, %{}, -3} = {make_ref(), %{}, -3}
      :ok = Credits.enqueue(t, tok, p)
      assert {:ok, {^ref, %{}, -3}} = Credits.take(t, n, e)
    end
  end

  describe "departures and defects (spec/credits.md C12, C13)" do
    test "C13: enqueued/1 orders by marked_ms, ties by slot" do
      t = Credits.new()
      [a, b, c, d] = for _ <- 1..4, do: elem(Credits.reserve(t, :general), 1)
      :ok = Credits.enqueue(t, c, :c, now_ms: 10)
      :ok = Credits.enqueue(t, b, :b, now_ms: 10)
      :ok = Credits.enqueue(t, a, :a, now_ms: 30)
      :ok = Credits.enqueue(t, d, :d, now_ms: -9_223_372_036_854_775_808)
      assert Enum.map(Credits.enqueued(t), &elem(&1, 3)) == [:d, :b, :c, :a]
    end

    test "C12: a class other than :general and :internal raises ArgumentError naming it" do
      t = Credits.new()

      for bad <- [:vip, "general", nil, 1] do
        e = assert_raise ArgumentError, fn -> Credits.reserve(t, bad) end
        assert e.message =~ "class must be :general or :internal, got: #{inspect(bad)}"
      end

      # also on a dead table: a defect is not a dead table
      assert_raise ArgumentError, fn -> Credits.reserve(dead_table(), :vip) end
      assert Credits.snapshot(t).general.free == 26
    end

    test "C12: a slot outside 1..32, epoch 0 or a malformed token raises ArgumentError naming the rule" do
      t = Credits.new()

      for tok <- [{0, 1}, {33, 1}, {1, 0}, {1, -1}, {1, nil}, {nil, 1}, {1.0, 1}, {1, "e"}, :token, {1, 2, 3}] do
        for fun <- [
              fn -> Credits.enqueue(t, tok, :p) end,
              fn -> Credits.finish(t, tok) end,
              fn -> Credits.finish_count(t, tok) end,
              fn -> Credits.release(t, tok) end,
              fn -> Credits.release_count(t, tok) end
            ] do
          e = assert_raise ArgumentError, fun
          assert e.message =~ "the token must be {slot, epoch}"
          assert e.message =~ "slot an integer in 1..32, epoch a positive integer"
        end
      end

      for {n, e} <- [{0, 1}, {33, 1}, {1, 0}, {:one, 1}] do
        assert_raise ArgumentError, ~r/slot an integer in 1..32/, fn -> Credits.take(t, n, e) end
      end

      # epoch 0 is the free row's: with it, a blind finish would match a free row
      assert row(t, 1) == {1, :free, :general, 0, 0, 0, nil}
      assert Credits.snapshot(t).general.free == 26
    end

    test "enqueue/4: :now_ms must be an integer" do
      t = Credits.new()
      {:ok, tok} = Credits.reserve(t, :general)

      assert_raise ArgumentError, ~r/^:now_ms must be an integer/, fn ->
        Credits.enqueue(t, tok, :p, now_ms: 1.5)
      end

      assert_raise ArgumentError, ~r/options must be a keyword list/, fn -> Credits.enqueue(t, tok, :p, 5) end

      assert elem(row(t, 1), 1) == :reserved
    end
  end
end
