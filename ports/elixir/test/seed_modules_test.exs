defmodule Tollgate.SeedModulesTest do
  # The seeds' module names (config :tollgate, seed_modules: true, set for
  # this project's test environment in config/config.exs) export exactly the
  # seeds' functions and run the Tollgate modules' code.
  use ExUnit.Case, async: true

  @token_bucket [new: 0, new: 1, peek: 3, reset: 2, reset_all: 1, retry_after: 3, take: 3]
  @credits [
    bounds: 0,
    enqueue: 3,
    enqueued: 1,
    finish: 2,
    new: 0,
    release: 2,
    reserve: 2,
    snapshot: 1,
    sweep: 1,
    take: 3
  ]

  defp exports(mod), do: Enum.sort(mod.__info__(:functions))

  test "Raxol.Core.TokenBucket exports the seed's functions, no more" do
    assert exports(Raxol.Core.TokenBucket) == Enum.sort(@token_bucket)
  end

  test "DrinkMeAlice.Credits exports the seed's functions, no more" do
    assert exports(DrinkMeAlice.Credits) == Enum.sort(@credits)
  end

  test "Tollgate.TokenBucket and Tollgate.Credits have every seed function at the seed's arity" do
    for f <- @token_bucket, do: assert(f in Tollgate.TokenBucket.__info__(:functions))
    for f <- @credits, do: assert(f in Tollgate.Credits.__info__(:functions))
  end

  test "every public function has a @doc and a @spec" do
    for mod <- [Tollgate.TokenBucket, Tollgate.Credits, Raxol.Core.TokenBucket, DrinkMeAlice.Credits] do
      {:docs_v1, _, :elixir, _, %{"en" => _}, _, docs} = Code.fetch_docs(mod)
      documented = for {{:function, f, a}, _, _, %{"en" => _}, _} <- docs, do: {f, a}
      {:ok, specs} = Code.Typespec.fetch_specs(mod)
      specced = for {{f, a}, _} <- specs, do: {f, a}

      for {f, a} <- mod.__info__(:functions), f != :__struct__ do
        # new/0 is new/1's default argument: its doc and spec are new/1's
        assert {f, a} in documented or {f, a + 1} in documented, "#{inspect(mod)}.#{f}/#{a} has no @doc"
        assert {f, a} in specced or {f, a + 1} in specced, "#{inspect(mod)}.#{f}/#{a} has no @spec"
      end
    end
  end

  test "the seed names run the same code: a bucket taken under one name is seen under the other" do
    t = Raxol.Core.TokenBucket.new()
    lim = [capacity: 2, refill_per_second: 1, now_ms: 0]
    assert Raxol.Core.TokenBucket.take(t, :_, lim) == {:ok, 1.0}
    assert Tollgate.TokenBucket.take(t, :_, lim) == {:ok, 0.0}
    assert Raxol.Core.TokenBucket.take(t, :_, lim) == {:error, :rate_limited}
    assert Raxol.Core.TokenBucket.retry_after(t, :_, lim) == 1000
    assert Raxol.Core.TokenBucket.peek(t, :_, [now_ms: 500] ++ lim) == 0.5
    assert Raxol.Core.TokenBucket.reset(t, :_) == :ok
    assert Raxol.Core.TokenBucket.reset_all(t) == :ok
    assert_raise ArgumentError, ~r/^:capacity is required/, fn -> Raxol.Core.TokenBucket.take(t, :k, []) end
  end

  test "the seed module's ArgumentError wording starts each message, so a caller's assert_raise keeps matching" do
    t = Raxol.Core.TokenBucket.new()
    take = fn opts -> Raxol.Core.TokenBucket.take(t, :k, opts) end

    for {opts, start} <- [
          {[refill_per_second: 1], ":capacity is required"},
          {[capacity: 1], ":refill_per_second is required"},
          {[capacity: 0, refill_per_second: 1], ":capacity must be a positive number, got: 0"},
          {[capacity: 1, refill_per_second: :fast], ":refill_per_second must be a positive number, got: :fast"},
          {[capacity: 1, refill_per_second: 1, cost: 0], ":cost must be a positive number, got: 0"}
        ] do
      e = assert_raise ArgumentError, fn -> take.(opts) end
      assert String.starts_with?(e.message, start), "#{inspect(e.message)} does not start with #{inspect(start)}"
    end

    e = assert_raise ArgumentError, fn -> take.(capacity: 1, refill_per_second: 1, cost: 2) end
    assert e.message =~ "could never be taken"
  end

  test "the seed names run the same code: credits" do
    alias DrinkMeAlice.Credits
    t = Credits.new()
    assert Credits.bounds() == %{general: 26, internal: 6, total: 32}
    {:ok, {n, e} = tok} = Credits.reserve(t, :general)
    :ok = Credits.enqueue(t, tok, {make_ref(), %{}, 0})
    assert [{^n, ^e, _, {_, %{}, 0}}] = Credits.enqueued(t)
    assert {:ok, {_, %{}, 0}} = Credits.take(t, n, e)
    assert Tollgate.Credits.snapshot(t).general.processing == 1
    assert Credits.finish(t, tok) == :ok
    {:ok, tok2} = Credits.reserve(t, :internal)
    assert Credits.release(t, tok2) == :ok
    assert Credits.sweep(t) == 0
    assert Credits.snapshot(t).internal.free == 6
    assert_raise ArgumentError, fn -> Credits.reserve(t, :vip) end
  end
end
