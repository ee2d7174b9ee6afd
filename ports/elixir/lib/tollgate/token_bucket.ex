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
    * **T12.** `reclaim/2` (the seed has none) forgets the buckets that are
      full, so a table of many short-lived keys does not keep every key it
      ever saw; a take that recreates a forgotten bucket is stamped no
      earlier than the newest reclaim's clock.

  ## Keys

  Any term is a key. Rows are stored under
  `:erlang.term_to_binary(key, [:deterministic])`: the compare-and-swap's
  match head must hold the key literally, and a key such as `:_` or
  `{:"$1"}` would be read there as a pattern. A binary never is.

  ## Rows

  A bucket is one row `{key, tokens, last_ms, id}`. A take on an absent
  bucket first inserts a placeholder `{key, :absent, id}` and then replaces
  it; `id` is unique in the VM and stays with the bucket until it is reset
  or reclaimed. A table that was reclaimed also holds the row
  `{:floor, gen, floor_ms}` (its key is an atom, so no user key, which is
  a binary, is it); `reset_all/1` deletes it with the buckets.
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
    take_loop(table, ekey(key), cap, rate, cost, now, fn _tokens, _last -> {:error, :rate_limited} end)
  end

  @doc """
  A take that, when it refuses, also says how long to wait: `{:ok,
  remaining}` as `take/3`, or `{:error, {:rate_limited, wait_ms}}` where
  `wait_ms` is `retry_after/3` of the very bucket state that refused, at the
  same `:now_ms` (tollgate's admit: one read, so the wait never belongs to
  a state another take has since changed). Takes the options of `take/3`.

      iex> table = Tollgate.TokenBucket.new()
      iex> lim = [capacity: 2, refill_per_second: 4, now_ms: 0]
      iex> Tollgate.TokenBucket.admit(table, "k", [cost: 2] ++ lim)
      {:ok, 0.0}
      iex> Tollgate.TokenBucket.admit(table, "k", [cost: 1] ++ lim)
      {:error, {:rate_limited, 250}}
  """
  @spec admit(table(), key(), keyword()) :: {:ok, float()} | {:error, {:rate_limited, non_neg_integer()}}
  def admit(table, key, opts) do
    {cap, rate, cost, now} = limits!(opts, :admit)

    take_loop(table, ekey(key), cap, rate, cost, now, fn tokens, last ->
      {:error, {:rate_limited, smallest_wait(fn w -> refill(tokens, last, cap, rate, now + w) >= cost end, now)}}
    end)
  end

  # The rows of a table (see "Rows" in the moduledoc):
  #
  #   {k, tokens, last, id}   a bucket: tokens left after the last committed
  #                           take, the newest clock any take carried (T4),
  #                           and the id of its placeholder
  #   {k, :absent, id}        a placeholder: an absent bucket a take is about
  #                           to create; id is unique in the VM
  #   {:floor, gen, floor_ms} the floor of every reclaim since the table was
  #                           made or reset_all (T12); gen is unique in the VM
  #
  # User keys k are binaries, so the atom :floor is no user key.
  defp take_loop(table, k, cap, rate, cost, now, refused) do
    case :ets.lookup(table, k) do
      [] ->
        # Announce the bucket before reading the floor: a reclaim raises the
        # floor before it looks at any row and deletes every placeholder it
        # finds, so either it saw this placeholder (and deleting it makes the
        # compare-and-swap below fail) or it raised the floor before the
        # placeholder existed, and floor_ms/1 below sees its clock.
        ph = {k, :absent, :erlang.unique_integer()}

        if :ets.insert_new(table, ph) do
          create(table, ph, cap, rate, cost, now, refused)
        else
          take_loop(table, k, cap, rate, cost, now, refused)
        end

      [{^k, :absent, _} = ph] ->
        create(table, ph, cap, rate, cost, now, refused)

      [{^k, tokens, last, id} = old] ->
        have = refill(tokens, last, cap, rate, now)

        if have < cost do
          refused.(tokens, last)
        else
          left = have - cost
          # One compare-and-swap: the match head is the row as read (its key
          # a literal binary), the new row rides in {:const, ...}; T4 keeps
          # the newer of the two clocks.
          spec = [{old, [], [{:const, {k, left, max(last, now), id}}]}]

          case :ets.select_replace(table, spec) do
            1 -> {:ok, left}
            0 -> take_loop(table, k, cap, rate, cost, now, refused)
          end
        end
    end
  end

  # A take on an absent bucket (placeholder ph): full, since cost <= capacity
  # (T9), and stamped max(now, floor) (T12). The floor is read after the
  # placeholder was seen, and the placeholder is replaced only if it is
  # still the very one seen: its id is unique, so a reset, reset_all or
  # reclaim that deleted it in between makes this fail, and the take starts
  # over (a reset_all also clears the floor, so an old floor read never
  # stamps a bucket of the emptied table).
  defp create(table, {k, :absent, id} = ph, cap, rate, cost, now, refused) do
    left = cap - cost
    last = if floor = floor_ms(table), do: max(now, floor), else: now

    case :ets.select_replace(table, [{ph, [], [{:const, {k, left, last, id}}]}]) do
      1 -> {:ok, left}
      0 -> take_loop(table, k, cap, rate, cost, now, refused)
    end
  end

  defp floor_ms(table) do
    case :ets.lookup(table, :floor) do
      [{:floor, _gen, floor}] -> floor
      [] -> nil
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
      [{_, tokens, last, _id}] -> refill(tokens, last, cap, rate, now)
      # absent, or a placeholder: a bucket no take has committed to yet
      _ -> cap
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
      [{_, tokens, last, _id}] ->
        smallest_wait(fn w -> refill(tokens, last, cap, rate, now + w) >= cost end, now)

      # absent (or a placeholder): full, and cost <= capacity
      _ ->
        0
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
  Forget every bucket that is full at `:now_ms`, and return how many were
  forgotten (tollgate T12).

  A bucket is forgotten when its stored timestamp is not after `:now_ms` and
  the refill formula with this call's `:capacity` and `:refill_per_second`
  gives exactly `:capacity` at `:now_ms`. Forgetting it deletes its row, so
  a table of many short-lived keys stays as small as the keys in use; a
  forgotten key answers every later call as the full bucket it was.

  Except for one thing, which is why a reclaim also keeps a *floor*: the
  newest `:now_ms` any reclaim of the table carried. A take that finds its
  bucket absent (never taken, reset, or forgotten) stamps it
  `max(now_ms, floor)` instead of its own clock, so a caller with a stale
  clock is never credited the time a forgotten bucket had already accrued
  (T4, T5). `reset/2` keeps the floor; `reset_all/1` clears it (the table is
  as new). A reclaim with an older clock than the floor leaves the floor
  where it is.

  The table stores no limits (T8): pass the `:capacity` and
  `:refill_per_second` the keys are taken with. A smaller capacity or a
  larger rate than a key's own may forget a bucket that was not full by its
  own limits.

  A reclaim runs beside takes, resets and other reclaims without a lock: it
  raises the floor before it looks at any bucket, and deletes a bucket only
  if its row is still exactly the row it judged full, so a take that
  committed in between keeps its bucket. It is linearizable per key.

  ## Options

    * `:capacity` (required) - as for `take/3`
    * `:refill_per_second` (required) - as for `take/3`
    * `:now_ms` - monotonic milliseconds, defaults to
      `System.monotonic_time(:millisecond)`

  `:cost` is ignored. Raises `ArgumentError` as `take/3` does when a limit
  is missing or invalid, and then changes nothing.

      iex> alias Tollgate.TokenBucket
      iex> table = TokenBucket.new()
      iex> lim = [capacity: 10, refill_per_second: 10]
      iex> {:ok, 0.0} = TokenBucket.take(table, "idle", [cost: 10, now_ms: 1000] ++ lim)
      iex> {:ok, 9.0} = TokenBucket.take(table, "busy", [now_ms: 1950] ++ lim)
      iex> TokenBucket.reclaim(table, [now_ms: 2000] ++ lim)
      1
      iex> TokenBucket.peek(table, "idle", [now_ms: 2000] ++ lim)
      10.0
      iex> TokenBucket.take(table, "idle", [cost: 10, now_ms: 0] ++ lim)
      {:ok, 0.0}
      iex> TokenBucket.retry_after(table, "idle", [now_ms: 2000] ++ lim)
      100

  (The take at 0 ms stamped the floor, 2000 ms: with its own clock the
  bucket would be full again at 2000 ms, a second credit of the same
  second.)
  """
  @spec reclaim(table(), keyword()) :: non_neg_integer()
  def reclaim(table, opts) do
    {cap, rate, _cost, now} = limits!(opts, :reclaim)
    # The floor first: a take that finds a bucket deleted below reads the
    # floor after that, and must see this clock.
    gen = raise_floor(table, now)

    rows = [
      {{:"$1", :_, :"$2", :_}, [{:is_binary, :"$1"}, {:"=<", :"$2", now}], [:"$_"]},
      {{:"$1", :absent, :_}, [{:is_binary, :"$1"}], [:"$_"]}
    ]

    # Fixed, the table is traversed so that every key present throughout
    # the traversal is visited (ETS's safe_fixtable guarantee); a key first
    # inserted after the traversal began was inserted after the floor rose.
    :ets.safe_fixtable(table, true)

    try do
      sweep(table, :ets.select(table, rows, 500), gen, cap, rate, now, 0)
    after
      :ets.safe_fixtable(table, false)
    end
  end

  defp sweep(_table, :"$end_of_table", _gen, _cap, _rate, _now, n), do: n

  defp sweep(table, {matches, cont}, gen, cap, rate, now, n) do
    case forget_all(table, matches, gen, cap, rate, now, n) do
      {:reset_all, n} -> n
      n -> sweep(table, :ets.select(cont), gen, cap, rate, now, n)
    end
  end

  defp forget_all(_table, [], _gen, _cap, _rate, _now, n), do: n

  defp forget_all(table, [row | rest], gen, cap, rate, now, n) do
    case forget(table, row, gen, cap, rate, now) do
      :reset_all -> {:reset_all, n}
      f -> forget_all(table, rest, gen, cap, rate, now, n + f)
    end
  end

  # One key's part of a reclaim: 1 if it forgot the bucket, else 0. A delete
  # names the whole row, never just the key (:ets.select_delete/2 with the
  # row as the match head): a take, reset or reclaim that changed the row
  # since it was read makes it delete nothing, and the key's current row is
  # judged again.
  defp forget(table, {k, :absent, _id} = ph, gen, cap, rate, now) do
    # A placeholder holds no bucket, but its take may have read the floor
    # before this reclaim raised it: deleting it makes that take start over
    # and read the floor again. Its state is absent either way.
    case :ets.select_delete(table, [{ph, [], [true]}]) do
      1 -> 0
      0 -> forget_key(table, k, gen, cap, rate, now)
    end
  end

  defp forget(table, {k, tokens, last, _id} = row, gen, cap, rate, now) do
    cond do
      last > now or refill(tokens, last, cap, rate, now) != cap ->
        # a take newer than the reclaim's clock, or not full
        0

      not floor_gen?(table, gen) ->
        # A reset_all emptied the table since the floor was raised, and its
        # floor with it: the row was read after it, so it belongs to the
        # new table, where this reclaim raised no floor. The reclaim
        # linearizes before the reset_all; what it left is gone anyway.
        :reset_all

      true ->
        case :ets.select_delete(table, [{row, [], [true]}]) do
          1 -> 1
          0 -> forget_key(table, k, gen, cap, rate, now)
        end
    end
  end

  defp forget_key(table, k, gen, cap, rate, now) do
    case :ets.lookup(table, k) do
      [row] -> forget(table, row, gen, cap, rate, now)
      [] -> 0
    end
  end

  # Raises the floor to now unless it is newer (one compare-and-swap on the
  # floor row, retried), creating it if the table has none; answers its
  # gen, which identifies this table since its last reset_all.
  defp raise_floor(table, now) do
    case :ets.lookup(table, :floor) do
      [] ->
        gen = :erlang.unique_integer()
        if :ets.insert_new(table, {:floor, gen, now}), do: gen, else: raise_floor(table, now)

      [{:floor, gen, floor}] when floor >= now ->
        gen

      [{:floor, gen, _} = old] ->
        case :ets.select_replace(table, [{old, [], [{:const, {:floor, gen, now}}]}]) do
          1 -> gen
          0 -> raise_floor(table, now)
        end
    end
  end

  # Whether the floor row is still the one raise_floor/2 answered gen for,
  # i.e. no reset_all since (a floor row made after a reset_all has a new
  # gen; a gen is unique in the VM).
  defp floor_gen?(table, gen), do: match?([{:floor, ^gen, _}], :ets.lookup(table, :floor))

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
      if fun in [:peek, :reclaim] do
        nil
      else
        cost = positive!(Keyword.get(opts, :cost, 1), :cost, fun)

        if cost > cap do
          raise ArgumentError,
                ":cost must not exceed :capacity (a cost above capacity could never be taken), " <>
                  "got: cost #{inspect(Keyword.get(opts, :cost, 1))}, " <>
                  "capacity #{inspect(Keyword.fetch!(opts, :capacity))} (#{fun})"
        end

        cost
      end

    now =
      case Keyword.fetch(opts, :now_ms) do
        {:ok, now} when is_integer(now) and now >= @min_i64 and now <= @max_i64 ->
          now

        {:ok, now} ->
          raise ArgumentError,
                ":now_ms must be an integer in the int64 range " <>
                  "(monotonic milliseconds), got: #{inspect(now)} (#{fun})"

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
              "#{inspect(name)} is required (#{what}; #{fun}): #{@why_required}"
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
            "#{inspect(name)} must be a positive number, got: #{inspect(x)} (#{fun}: a finite number > 0)"
    end
  end

  defp to_float(i) do
    :erlang.float(i)
  rescue
    ArgumentError -> nil
  end
end
