# Unit tests of the Elixir port for what the JSON protocol cannot reach
# (keys and payloads that are arbitrary Erlang terms, holder processes).
# Run: elixir ports/elixir/test/tollgate_test.exs
dir = Path.join([__DIR__, "..", "lib"])
for f <- ~w(json.ex token_bucket.ex credits.ex), do: Code.require_file(f, dir)
ExUnit.start()

defmodule Tollgate.TokenBucketTest do
  use ExUnit.Case, async: true
  alias Tollgate.TokenBucket, as: TB

  @lim [capacity: 3, refill_per_second: 1, now_ms: 0]

  test "T8: keys that are match-spec patterns stay literal and independent" do
    t = TB.new()
    keys = [:_, :"$1", {:_, :_}, [:"$2" | :_], "a", {:const, :x}]

    for {k, i} <- Enum.with_index(keys) do
      assert {:ok, left} = TB.take(t, k, [{:cost, 0.5 * (i + 1)} | @lim])
      assert left == 3 - 0.5 * (i + 1)
    end

    for {k, i} <- Enum.with_index(keys) do
      assert TB.peek(t, k, @lim) == {:ok, 3 - 0.5 * (i + 1)}
    end

    assert TB.reset(t, :_) == :ok
    assert TB.peek(t, :_, @lim) == {:ok, 3.0}
    assert TB.peek(t, "a", @lim) == {:ok, 0.5}
  end

  test "the seed's select_replace with the key in the match head breaks on the key :_" do
    # What the port avoids: a head holding the key term itself.
    t = :ets.new(:naive, [:set, :public])
    :ets.insert(t, {"other", 5.0, 0})
    :ets.insert(t, {:_, 5.0, 0})

    assert_raise ArgumentError, fn ->
      :ets.select_replace(t, [{{:_, 5.0, 0}, [], [{:const, {:_, 4.0, 0}}]}])
    end
  end

  test "T3: float overflow means capacity, not a crash" do
    t = TB.new()
    big = [capacity: 1.7976931348623157e308, refill_per_second: 1.7976931348623157e308]
    assert {:ok, +0.0} = TB.take(t, "k", [cost: 1.7976931348623157e308, now_ms: 0] ++ big)
    assert TB.peek(t, "k", [now_ms: 2000] ++ big) == {:ok, 1.7976931348623157e308}
  end

  test "T9: non-finite values arrive as atoms and are refused, naming the field" do
    t = TB.new()
    assert {:error, {:invalid_argument, "capacity", _}} = TB.take(t, "k", capacity: :nan, refill_per_second: 1, now_ms: 0)
    assert {:error, {:invalid_argument, "cost", _}} = TB.take(t, "k", capacity: 0.5, refill_per_second: 1, now_ms: 0)
    assert :ets.info(t, :size) == 0
  end
end

defmodule Tollgate.CreditsTest do
  use ExUnit.Case, async: true
  alias Tollgate.Credits

  test "C4-C6: a payload that looks like a match expression is stored as data" do
    t = Credits.new()
    {:ok, tok} = Credits.reserve(t, :general)
    payload = {make_ref(), %{:_ => :"$1"}, {:const, 1}}
    assert Credits.enqueue(t, tok, payload, 7) == :ok
    assert [{1, _, 7, ^payload}] = Credits.enqueued(t)
    assert Credits.take(t, tok) == {:ok, payload}
    assert Credits.finish(t, tok) == 1
  end

  test "C10: sweep frees the reserved row of a dead holder process, never an enqueued one" do
    t = Credits.new()
    parent = self()

    holder =
      spawn(fn ->
        {:ok, a} = Credits.reserve(t, :general)
        {:ok, b} = Credits.reserve(t, :general)
        :ok = Credits.enqueue(t, b, :p, 0)
        send(parent, {:tokens, a, b})
      end)

    assert_receive {:tokens, _a, b}
    ref = Process.monitor(holder)
    assert_receive {:DOWN, ^ref, _, _, _}
    assert Credits.sweep(t) == 1
    assert Credits.take(t, b) == {:ok, :p}
  end

  test "C11/C12: a dead table answers as gone; a bad class on a live table raises" do
    parent = self()
    owner = spawn(fn -> send(parent, {:t, Credits.new()}); receive do: (:stop -> :ok) end)
    assert_receive {:t, t}
    ref = Process.monitor(owner)
    send(owner, :stop)
    assert_receive {:DOWN, ^ref, _, _, _}
    assert Credits.reserve(t, :general) == {:error, :no_table}
    assert Credits.take(t, {1, 1}) == :none
    assert Credits.sweep(t) == 0

    live = Credits.new()
    assert_raise FunctionClauseError, fn -> Credits.reserve(live, :vip) end
  end
end
