defmodule Tollgate.TokenBucket do
  @moduledoc """
  A keyed token bucket on ETS, ported from tollgate's spec
  (spec/tokenbucket.md) in the style of the seed: no owning process, all
  state in a public ETS table, takes committed with `:ets.select_replace/2`
  and retried on a lost race, fresh buckets created with `:ets.insert_new/2`.

  Where tollgate departs from the seed, this port follows tollgate:

    * the stored timestamp never moves backwards: `last = max(last, now)` (T4);
    * a lost race is retried without bound, never turned into a refusal (T2);
    * `retry_after/3` is the smallest wait that works, not the closed form (T7);
    * every argument is checked (T9) and a refusal writes nothing (T2);
    * the arithmetic is the binary64 sequence of T3, with float overflow
      (which Erlang raises instead of returning +Inf) meaning "refilled to
      capacity".

  Rows are `{ekey, tokens, last_ms}`. `ekey` is `:erlang.term_to_binary(key,
  [:deterministic])`: a match head must hold the key literally for
  `select_replace` to address one row, and a key term such as `:_` or
  `{:"$1"}` would be read as a pattern there and match other buckets. A binary
  is never a pattern, so every key, whatever it contains, stays literal.
  """

  @never 9_223_372_036_854_775_807
  @max_ms 9_223_372_036_854_775_807

  def never, do: @never

  @doc "Create a bucket table, public and owned by the caller."
  def new(name \\ :tollgate_token_bucket) do
    :ets.new(name, [:set, :public, read_concurrency: true, write_concurrency: true])
  end

  @doc """
  Take `cost` tokens (default 1) at `now_ms`. `{:ok, remaining}`,
  `{:error, :rate_limited}` or `{:error, {:invalid_argument, field, message}}`.
  """
  def take(table, key, opts) do
    with {:ok, cap, rate, cost, now} <- args(opts, true) do
      take_loop(table, ekey(key), cap, rate, cost, now)
    end
  end

  defp take_loop(table, k, cap, rate, cost, now) do
    case :ets.lookup(table, k) do
      [] ->
        # An absent bucket holds capacity, and cost <= capacity (T9).
        left = cap - cost

        if :ets.insert_new(table, {k, left, now}) do
          {:ok, left}
        else
          take_loop(table, k, cap, rate, cost, now)
        end

      [{^k, tokens, last} = old] ->
        have = refill(tokens, last, cap, rate, now)

        if have < cost do
          {:error, :rate_limited}
        else
          left = have - cost
          # One compare-and-swap: the match head is the row as read, the key
          # is a literal binary, the new row rides in {:const, …}.
          spec = [{old, [], [{:const, {k, left, max(last, now)}}]}]

          case :ets.select_replace(table, spec) do
            1 -> {:ok, left}
            0 -> take_loop(table, k, cap, rate, cost, now)
          end
        end
    end
  end

  @doc "Tokens the bucket holds at `now_ms`; never creates a bucket (T6)."
  def peek(table, key, opts) do
    with {:ok, cap, rate, _cost, now} <- args(opts, false) do
      {:ok, held(table, ekey(key), cap, rate, now)}
    end
  end

  @doc """
  The smallest `w >= 0` such that a take of `cost` at `now_ms + w` succeeds
  if nobody else takes (T7), or #{@never} when no clock up to 2^63-1 does.
  """
  def retry_after(table, key, opts) do
    with {:ok, cap, rate, cost, now} <- args(opts, true) do
      case :ets.lookup(table, ekey(key)) do
        [] ->
          {:ok, 0}

        [{_, tokens, last}] ->
          covers = fn w -> refill(tokens, last, cap, rate, now + w) >= cost end
          {:ok, smallest_wait(covers, now)}
      end
    end
  end

  # Bisection over the refill formula itself, which is monotone in the clock.
  defp smallest_wait(covers, now) do
    # Real waits stop one short of @never (T7), so the answer is unambiguous.
    hi = if now > 1, do: @max_ms - now, else: @max_ms - 1

    cond do
      covers.(0) -> 0
      not covers.(hi) -> @never
      true -> bisect(covers, 0, hi)
    end
  end

  defp bisect(_covers, lo, hi) when hi - lo <= 1, do: hi

  defp bisect(covers, lo, hi) do
    mid = lo + div(hi - lo, 2)
    if covers.(mid), do: bisect(covers, lo, mid), else: bisect(covers, mid, hi)
  end

  @doc "Forget a bucket (T10)."
  def reset(table, key) do
    :ets.delete(table, ekey(key))
    :ok
  end

  @doc "Forget every bucket (T10)."
  def reset_all(table) do
    :ets.delete_all_objects(table)
    :ok
  end

  defp held(table, k, cap, rate, now) do
    case :ets.lookup(table, k) do
      [] -> cap
      [{_, tokens, last}] -> refill(tokens, last, cap, rate, now)
    end
  end

  @doc """
  T3: min(tokens + (float(elapsed) / 1000) * rate, capacity), each step
  rounded to binary64. Erlang integers are exact, so `now - last` cannot
  overflow; `:erlang.float/1` rounds to nearest; the BEAM has no fused
  multiply-add. A float overflow raises in Erlang where IEEE gives +Inf, and
  +Inf is clamped to capacity, so an overflow means capacity.
  """
  def refill(tokens, last, cap, rate, now) do
    elapsed = if now > last, do: now - last, else: 0

    try do
      min(tokens + :erlang.float(elapsed) / 1000 * rate, cap)
    rescue
      ArithmeticError -> cap
    end
  end

  defp ekey(key), do: :erlang.term_to_binary(key, [:deterministic])

  # ---- arguments (T9) ---------------------------------------------------------

  @positive "must be finite and > 0"
  @cost_rule "must not exceed capacity (it could never be taken)"

  defp args(opts, with_cost) do
    cap = Keyword.fetch!(opts, :capacity)
    rate = Keyword.fetch!(opts, :refill_per_second)
    cost = Keyword.get(opts, :cost, 1)
    now = Keyword.fetch!(opts, :now_ms)

    cond do
      not positive_finite(cap) -> invalid("capacity", cap, @positive)
      not positive_finite(rate) -> invalid("refill_per_second", rate, @positive)
      with_cost and not positive_finite(cost) -> invalid("cost", cost, @positive)
      with_cost and cost > cap -> invalid("cost", cost, @cost_rule)
      true -> {:ok, :erlang.float(cap), :erlang.float(rate), :erlang.float(cost), now}
    end
  end

  # Finite values only exist as Erlang numbers; NaN and the infinities arrive
  # as atoms and are refused here.
  defp positive_finite(x) when is_number(x), do: x > 0
  defp positive_finite(_), do: false

  defp invalid(field, value, rule) do
    {:error, {:invalid_argument, field, "#{field} #{inspect(value)} #{rule}"}}
  end
end
