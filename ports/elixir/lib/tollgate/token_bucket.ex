defmodule Tollgate.TokenBucket do
  @moduledoc """
  ETS-backed keyed token bucket with the API of the seed's
  `Raxol.Core.TokenBucket` and the semantics of tollgate's
  `spec/tokenbucket.md`.

  A bucket holds at most `:capacity` tokens and regains them at
  `:refill_per_second`. `take/3` removes tokens and refuses once the bucket
  cannot cover the cost, so a caller may burst up to `:capacity` and then
  proceeds at the refill rate.

  There is no owning process: all state lives in a public ETS table created
  by the caller with `new/1`, so buckets are keyed per upstream, per user or
  per action, and two callers never contend on a single mailbox.

      iex> alias Tollgate.TokenBucket
      iex> table = TokenBucket.new()
      iex> limit = [capacity: 30, refill_per_second: 5.0, now_ms: 0]
      iex> call = fn ->
      ...>   case TokenBucket.take(table, "trongrid", limit) do
      ...>     {:ok, _remaining} ->
      ...>       :called_upstream
      ...>
      ...>     {:error, :rate_limited} ->
      ...>       {:error, {:retry_after, TokenBucket.retry_after(table, "trongrid", limit)}}
      ...>   end
      ...> end
      iex> Enum.map(1..30, fn _ -> call.() end) |> Enum.uniq()
      [:called_upstream]
      iex> call.()
      {:error, {:retry_after, 200}}

  (The seed's example reads the real clock; this one pins `:now_ms` so that
  the answer is exact: at 5 tokens a second the next token is 200 ms away.)

  ## The limit belongs to the caller

  `:capacity` and `:refill_per_second` are required on every call and are
  never read from application environment, so one table holds buckets with
  different limits. A missing one raises `ArgumentError` naming it. Passing
  a smaller `:capacity` later clamps what that call sees, and the stored
  tokens are clamped when its take commits.

      iex> alias Tollgate.TokenBucket
      iex> table = TokenBucket.new()
      iex> TokenBucket.take(table, :k, capacity: 10, refill_per_second: 1, now_ms: 0)
      {:ok, 9.0}
      iex> TokenBucket.peek(table, :k, capacity: 3, refill_per_second: 1, now_ms: 0)
      3.0
      iex> TokenBucket.take(table, :k, capacity: 3, refill_per_second: 1, now_ms: 0)
      {:ok, 2.0}
      iex> TokenBucket.peek(table, :k, capacity: 10, refill_per_second: 1, now_ms: 0)
      2.0

  ## Time

  Refill is computed from elapsed monotonic milliseconds, and fractional
  tokens survive across calls. `:now_ms` supplies the clock; it defaults to
  `System.monotonic_time(:millisecond)`, read once per call.

      iex> alias Tollgate.TokenBucket
      iex> table = TokenBucket.new()
      iex> lim = [capacity: 1, refill_per_second: 1.0]
      iex> TokenBucket.take(table, "k", [now_ms: 0] ++ lim)
      {:ok, 0.0}
      iex> TokenBucket.peek(table, "k", [now_ms: 250] ++ lim)
      0.25
      iex> TokenBucket.take(table, "k", [now_ms: 250] ++ lim)
      {:error, :rate_limited}
      iex> TokenBucket.retry_after(table, "k", [now_ms: 250] ++ lim)
      750
      iex> TokenBucket.take(table, "k", [now_ms: 1000] ++ lim)
      {:ok, 0.0}

  ## Where this differs from the seed (tollgate's spec, on purpose)

    * **T4.** The stored timestamp never moves backwards: a take stores
      `max(last, now_ms)`. The seed clamps an older `:now_ms` to zero elapsed
      but then stores it, so the next take is credited the same interval
      twice (alternating the clock between 1000 and 0 admitted 200 takes of
      200 at capacity 10).
    * **T2.** A lost compare-and-swap race is retried until it commits; it is
      never turned into `{:error, :rate_limited}` (the seed gives up after 100
      lost races). A refusal writes nothing and never creates a bucket.
    * **T7.** `retry_after/3` is the smallest wait after which a take of
      `:cost` succeeds if nobody else takes, evaluated with the refill formula
      itself; the seed's `ceil(deficit / rate * 1000)` can be 1 ms short. A
      wait beyond the int64 clock answers `never/0`.
    * **T9.** `:capacity`, `:refill_per_second` and `:cost` must be finite
      numbers `> 0`, and `:cost` must not exceed `:capacity`; anything else
      raises `ArgumentError` naming the option and the rule. Erlang has no NaN
      or infinite floats: callers that spell them as atoms (`:nan`,
      `:infinity`, as JSON decoders do) are refused, and so is an integer too
      large to be a float. `:now_ms` must be an integer in the int64 range.
    * **T3.** The refill is the binary64 sequence
      `min(tokens + (float(elapsed) / 1000) * rate, capacity)`; a float
      overflow (which Erlang raises where IEEE gives +Inf) means "refilled to
      capacity".

  ## Keys

  Any term is a key. Rows are stored under
  `:erlang.term_to_binary(key, [:deterministic])`: the compare-and-swap's
  match head must hold the key literally, and a key such as `:_` or
  `{:"$1"}` would be read there as a pattern. A binary never is.
  """

  @typedoc "A bucket key: any term."
  @type key() :: term()

  @typedoc "A bucket table, as `new/1` returns it."
  @type table() :: :ets.table()

  @max_i64 9_223_372_036_854_775_807
  @min_i64 -9_223_372_036_854_775_808
  @never @max_i64

  @doc """
  The answer of `retry_after/3` when no clock reading up to 2^63-1 ms would
  cover the cost: `9223372036854775807`.
  """
  @spec never() :: non_neg_integer()
  def never, do: @never

  @doc """
  Create a bucket table.

  The table is public and owned by the calling process, so it lives exactly
  as long as that process. `name` labels the table (it is not registered,
  so any number of tables may share it). Pass the returned reference to
  `take/3` and friends.

      iex> table = Tollgate.TokenBucket.new()
      iex> :ets.info(table, :protection)
      :public
      iex> :ets.info(table, :owner) == self()
      true
  """
  @spec new(atom()) :: :ets.table()
  def new(name \\ __MODULE__) do
    :ets.new(name, [:set, :public, read_concurrency: true, write_concurrency: true])
  end

  @doc """
  Take tokens from a bucket, refilling it for the time elapsed first.

  Returns `{:ok, remaining}` when the bucket covered the cost,
  `{:error, :rate_limited}` when it did not. A bucket that has never been
  seen starts full. A refusal changes nothing.

  The take is atomic: it reads the bucket and commits with
  `:ets.select_replace/2`, which only succeeds if nothing changed
  underneath, and retries a lost race until it commits (a fresh bucket is
  created with `:ets.insert_new/2`, retried the same way).

  ## Options

    * `:capacity` (required) - burst size, a positive number of tokens
    * `:refill_per_second` (required) - tokens regained per second, a
      positive number
    * `:cost` - tokens this call consumes, defaults to `1`, must not exceed
      `:capacity`
    * `:now_ms` - monotonic milliseconds, defaults to
      `System.monotonic_time(:millisecond)`

  Raises `ArgumentError` naming the option and the rule when one is missing
  or invalid.

      iex> table = Tollgate.TokenBucket.new()
      iex> Tollgate.TokenBucket.take(table, "k", capacity: 2, refill_per_second: 1, cost: 2, now_ms: 0)
      {:ok, 0.0}
      iex> Tollgate.TokenBucket.take(table, "k", capacity: 2, refill_per_second: 1, now_ms: 0)
      {:error, :rate_limited}
  """
  @spec take(table(), key(), keyword()) :: {:ok, float()} | {:error, :rate_limited}
  def take(table, key, opts) do
    {cap, rate, cost, now} = limits!(opts, :take)
    take_loop(table, ekey(key), cap, rate, cost, now)
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
          # One compare-and-swap: the match head is the row as read (its key
          # a literal binary), the new row rides in {:const, ...}; T4 keeps
          # the newer of the two clocks.
          spec = [{old, [], [{:const, {k, left, max(last, now)}}]}]

          case :ets.select_replace(table, spec) do
            1 -> {:ok, left}
            0 -> take_loop(table, k, cap, rate, cost, now)
          end
        end
    end
  end

  @doc """
  Tokens currently available, refilled for the time elapsed but not
  consumed.

  Takes the same options as `take/3`, except `:cost`, which is irrelevant to
  a read (it is ignored). Never creates a bucket: an unseen key peeks
  `:capacity`.

      iex> table = Tollgate.TokenBucket.new()
      iex> Tollgate.TokenBucket.peek(table, "unseen", capacity: 4, refill_per_second: 1, now_ms: 0)
      4.0
      iex> :ets.info(table, :size)
      0
  """
  @spec peek(table(), key(), keyword()) :: float()
  def peek(table, key, opts) do
    {cap, rate, _cost, now} = limits!(opts, :peek)

    case :ets.lookup(table, ekey(key)) do
      [] -> cap
      [{_, tokens, last}] -> refill(tokens, last, cap, rate, now)
    end
  end

  @doc """
  Milliseconds until `:cost` tokens are available, rounded up.

  Returns `0` when the bucket can already cover the cost, which makes it
  safe to use as a `Retry-After` hint without a branch. Otherwise it is the
  smallest `w >= 1` such that a take of `:cost` at `now_ms + w` succeeds if
  nobody else takes (tollgate T7), or `never/0` when no clock reading up to
  2^63-1 ms would do. Takes the same options as `take/3`.

      iex> table = Tollgate.TokenBucket.new()
      iex> lim = [capacity: 8, refill_per_second: 11.666666666666666]
      iex> Tollgate.TokenBucket.take(table, "k", [cost: 8, now_ms: 0] ++ lim)
      {:ok, 0.0}
      iex> Tollgate.TokenBucket.retry_after(table, "k", [cost: 7, now_ms: 1] ++ lim)
      600
      iex> Tollgate.TokenBucket.take(table, "k", [cost: 7, now_ms: 600] ++ lim)
      {:error, :rate_limited}
      iex> Tollgate.TokenBucket.take(table, "k", [cost: 7, now_ms: 601] ++ lim)
      {:ok, 0.011666666666665826}

  (The seed's closed form, `ceil((7 - 0.011666666666666665) / 11.666666666666666 * 1000)`,
  answers 599 here, one millisecond short: rounding.)
  """
  @spec retry_after(table(), key(), keyword()) :: non_neg_integer()
  def retry_after(table, key, opts) do
    {cap, rate, cost, now} = limits!(opts, :retry_after)

    case :ets.lookup(table, ekey(key)) do
      [] ->
        0

      [{_, tokens, last}] ->
        smallest_wait(fn w -> refill(tokens, last, cap, rate, now + w) >= cost end, now)
    end
  end

  # Bisection over the refill formula itself, which is monotone in the clock.
  defp smallest_wait(covers, now) do
    # Real waits stop one short of never (T7), so the answer is unambiguous.
    hi = if now > 1, do: @max_i64 - now, else: @max_i64 - 1

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

  @doc """
  Forget a bucket, so the next `take/3` starts from a full one.

      iex> table = Tollgate.TokenBucket.new()
      iex> lim = [capacity: 1, refill_per_second: 1, now_ms: 0]
      iex> {:ok, _} = Tollgate.TokenBucket.take(table, "k", lim)
      iex> Tollgate.TokenBucket.reset(table, "k")
      :ok
      iex> Tollgate.TokenBucket.take(table, "k", lim)
      {:ok, 0.0}
  """
  @spec reset(table(), key()) :: :ok
  def reset(table, key) do
    :ets.delete(table, ekey(key))
    :ok
  end

  @doc """
  Forget every bucket in the table.

      iex> table = Tollgate.TokenBucket.new()
      iex> lim = [capacity: 1, refill_per_second: 1, now_ms: 0]
      iex> {:ok, _} = Tollgate.TokenBucket.take(table, "a", lim)
      iex> {:ok, _} = Tollgate.TokenBucket.take(table, "b", lim)
      iex> Tollgate.TokenBucket.reset_all(table)
      :ok
      iex> :ets.info(table, :size)
      0
  """
  @spec reset_all(table()) :: :ok
  def reset_all(table) do
    :ets.delete_all_objects(table)
    :ok
  end

  # T3: min(tokens + (float(elapsed) / 1000) * rate, capacity), each step
  # rounded to binary64. Erlang integers are exact, so now - last cannot
  # overflow; :erlang.float/1 rounds to nearest; the BEAM has no fused
  # multiply-add. A float overflow raises in Erlang where IEEE gives +Inf,
  # and +Inf is clamped to capacity, so an overflow means capacity.
  defp refill(tokens, last, cap, rate, now) do
    elapsed = if now > last, do: now - last, else: 0

    try do
      min(tokens + :erlang.float(elapsed) / 1000 * rate, cap)
    rescue
      ArithmeticError -> cap
    end
  end

  defp ekey(key), do: :erlang.term_to_binary(key, [:deterministic])

  # ---- options (T9) -----------------------------------------------------------

  @why_required "the limit belongs to the caller: it is never read from application " <>
                  "environment, so every call must pass it (one table holds buckets with different limits)"

  defp limits!(opts, fun) do
    unless is_list(opts) do
      raise ArgumentError, "#{fun}: options must be a keyword list, got: #{inspect(opts)}"
    end

    cap = required!(opts, :capacity, "the burst size, a positive number of tokens", fun)
    cap = positive!(cap, :capacity, fun)
    rate = required!(opts, :refill_per_second, "tokens regained per second, a positive number", fun)
    rate = positive!(rate, :refill_per_second, fun)

    cost =
      if fun == :peek do
        nil
      else
        cost = positive!(Keyword.get(opts, :cost, 1), :cost, fun)

        if cost > cap do
          raise ArgumentError,
                "#{fun}: invalid option :cost: must not exceed :capacity (a cost above capacity " <>
                  "could never be taken), got: cost #{inspect(Keyword.get(opts, :cost, 1))}, " <>
                  "capacity #{inspect(Keyword.fetch!(opts, :capacity))}"
        end

        cost
      end

    now =
      case Keyword.fetch(opts, :now_ms) do
        {:ok, now} when is_integer(now) and now >= @min_i64 and now <= @max_i64 ->
          now

        {:ok, now} ->
          raise ArgumentError,
                "#{fun}: invalid option :now_ms: must be an integer in the int64 range " <>
                  "(monotonic milliseconds), got: #{inspect(now)}"

        :error ->
          System.monotonic_time(:millisecond)
      end

    {cap, rate, cost, now}
  end

  defp required!(opts, name, what, fun) do
    case Keyword.fetch(opts, name) do
      {:ok, value} ->
        value

      :error ->
        raise ArgumentError,
              "#{fun}: missing required option #{inspect(name)} (#{what}): #{@why_required}"
    end
  end

  # Finite positive numbers only, as floats. NaN and the infinities cannot be
  # Erlang floats; as atoms (or any other term) they are refused here, and
  # so is an integer beyond the float range. -0.0 > 0 is false.
  defp positive!(x, name, fun) do
    f =
      cond do
        is_float(x) -> x
        is_integer(x) -> to_float(x)
        true -> nil
      end

    if f != nil and f > 0 do
      f
    else
      raise ArgumentError,
            "#{fun}: invalid option #{inspect(name)}: must be a finite number > 0, got: #{inspect(x)}"
    end
  end

  defp to_float(i) do
    :erlang.float(i)
  rescue
    ArgumentError -> nil
  end
end
