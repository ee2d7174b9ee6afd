defmodule Tollgate.Credits do
  @moduledoc """
  The 32-credit admission bound with the API of the seed's
  `DrinkMeAlice.Credits` and the semantics of tollgate's `spec/credits.md`:
  a fixed slot table whose rows also hold the bounded request payload.

  Each slot is one ETS row `{n, state, class, holder, epoch, marked_ms,
  payload}` under a flat integer key (1..26 `:general`, 27..32 `:internal`),
  and every transition is one `:ets.select_replace/2` compare-and-swap on
  that key, pinned by the reservation's epoch:

    * `reserve/2`: `free → reserved` for the calling process, under a fresh
      epoch (`:erlang.unique_integer/1`, never issued twice in the VM's life);
    * `enqueue/3`: `reserved → enqueued` in one write that installs the
      payload as `{:const, payload}`, only for the reserving process and that
      epoch, so a `reserved` row never holds a payload and a stale token on a
      recycled slot matches nothing;
    * `take/3`: the owner's `enqueued → processing`, returning the payload;
    * `finish/2`: the owner's `processing → free` (and, defensively,
      `enqueued → free`), so the credit covers the whole queued-and-processing
      window, caller death and caller timeout included;
    * `release/2`: the caller's free of a reservation it never enqueued;
    * `sweep/1`: frees `reserved` rows whose holder process is dead;
      `enqueued` and `processing` rows are never swept.

  There is no caller → owner message: the owner polls `enqueued/1`.

      iex> alias Tollgate.Credits
      iex> t = Credits.new()
      iex> {:ok, {n, epoch} = token} = Credits.reserve(t, :general)
      iex> n
      1
      iex> payload = {make_ref(), %{path: "/rpc"}, 5_000}
      iex> Credits.enqueue(t, token, payload)
      :ok
      iex> [{^n, ^epoch, _marked_ms, ^payload}] = Credits.enqueued(t)
      iex> Credits.take(t, n, epoch) == {:ok, payload}
      true
      iex> Credits.finish(t, token)
      :ok
      iex> Credits.snapshot(t).general.free
      26

  ## Dead tables and defects

  A table lives as long as the process that created it; when that process
  dies every operation answers as a dead table: `{:error, :no_table}`,
  `:none`, `:ok`, `0`, `[]`, zero counts. An `ArgumentError` from ETS is read
  as a dead table **only** when `:ets.info/1` says the table is gone; on a
  live table it is re-raised.

  Arguments that no correct caller passes raise `ArgumentError` naming the
  argument and the rule (tollgate C12): a class other than `:general` and
  `:internal`, a slot outside 1..32, an epoch that is not a positive integer
  (epoch 0 is the free row's), a token that is not `{slot, epoch}`.

  ## Where this differs from the seed (tollgate's spec, on purpose)

    * `reserve/2` answers `{:error, :exhausted}` only after two scans of the
      class saw the same non-free rows: one pass over 26 independent rows is
      not an atomic view of the class (a slot freed behind the scan and
      another claimed ahead of it make every slot look taken though none was
      at once).
    * `enqueued/1` orders by `marked_ms`, ties by slot, rather than "oldest
      enqueue first": the order is a function of the rows, and two enqueues
      in one millisecond are not ordered by time anyway.
    * Defects raise `ArgumentError` (above), where the seed's match specs
      would simply match nothing (or, for epoch 0, a free row).
    * `finish/2` and `release/2` return `:ok` as in the seed; `finish_count/2`
      and `release_count/2` say whether the call freed the row (tollgate's
      protocol reports it). `enqueue/4` takes `:now_ms` for the mark. These
      are additions; no seed function changed its arity or return shape.
  """

  @typedoc "The two classes: slots 1..26 and 27..32."
  @type class() :: :general | :internal

  @typedoc """
  A request payload. The seed's owner stores `{reference(), map(), integer()}`;
  any term is stored and returned exactly.
  """
  @type payload() :: {reference(), map(), integer()} | term()

  @typedoc "One reservation: `{slot, epoch}` as `reserve/2` returned it."
  @type token() :: {non_neg_integer(), non_neg_integer()}

  @general 1..26
  @internal 27..32

  @doc """
  The declared split for evidence/tests.

      iex> Tollgate.Credits.bounds()
      %{general: 26, internal: 6, total: 32}
  """
  @spec bounds() :: map()
  def bounds, do: %{general: 26, internal: 6, total: 32}

  defp range(:general), do: @general
  defp range(:internal), do: @internal

  defp class_of(n) when n in @general, do: :general
  defp class_of(n) when n in @internal, do: :internal

  @doc """
  Create the slot table (all slots `:free`). Owned by the caller: it lives
  as long as the calling process.

      iex> t = Tollgate.Credits.new()
      iex> Tollgate.Credits.snapshot(t)
      %{general: %{free: 26, reserved: 0, enqueued: 0, processing: 0},
        internal: %{free: 6, reserved: 0, enqueued: 0, processing: 0}}
  """
  @spec new() :: :ets.tid()
  def new do
    t = :ets.new(__MODULE__, [:set, :public, read_concurrency: true, write_concurrency: true])
    :ets.insert(t, Enum.map(1..32, &free/1))
    t
  end

  defp free(n), do: {n, :free, class_of(n), 0, 0, 0, nil}

  # Runs f; an ArgumentError is `dead` only if the table is gone (the seed's
  # rule): on a live table it is a defect and is re-raised.
  defp guarded(t, dead, f) do
    f.()
  rescue
    e in ArgumentError ->
      if :ets.info(t) == :undefined, do: dead, else: reraise(e, __STACKTRACE__)
  end

  @doc """
  Atomically claim a free slot of `class` for the calling process.
  `{:ok, {n, epoch}}` | `{:error, :exhausted | :no_table}`.

  Used sequentially it claims the lowest free slot of the class. Raises
  `ArgumentError` for a class other than `:general` and `:internal`.

      iex> t = Tollgate.Credits.new()
      iex> {:ok, {27, _epoch}} = Tollgate.Credits.reserve(t, :internal)
      iex> for _ <- 1..5, do: elem(Tollgate.Credits.reserve(t, :internal), 0)
      [:ok, :ok, :ok, :ok, :ok]
      iex> Tollgate.Credits.reserve(t, :internal)
      {:error, :exhausted}
  """
  @spec reserve(:ets.tid(), class()) :: {:ok, token()} | {:error, :exhausted | :no_table}
  def reserve(t, class) do
    unless class in [:general, :internal] do
      raise ArgumentError, "reserve: class must be :general or :internal, got: #{inspect(class)}"
    end

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

  @doc """
  Publish the request payload and flip `reserved → enqueued` in ONE
  `select_replace` CAS. `:ok` | `{:error, :lost | :no_table}`.

  The match requires the row to be `reserved` by the calling process under
  the token's epoch; the payload rides in the same write as
  `{:const, payload}`, so there is no interim reserved-with-payload state.
  A holder that dies before the CAS leaves an ordinary sweepable
  `reserved` row; a stale token on a recycled slot fails the epoch match and
  overwrites nothing. The row is marked with
  `System.monotonic_time(:millisecond)` (see `enqueue/4`).

      iex> t = Tollgate.Credits.new()
      iex> {:ok, token} = Tollgate.Credits.reserve(t, :general)
      iex> Tollgate.Credits.enqueue(t, token, :request)
      :ok
      iex> Tollgate.Credits.enqueue(t, token, :request)
      {:error, :lost}
  """
  @spec enqueue(:ets.tid(), token(), payload()) :: :ok | {:error, :lost | :no_table}
  def enqueue(t, token, payload), do: enqueue(t, token, payload, [])

  @doc """
  `enqueue/3` with options (an addition to the seed's API):

    * `:now_ms` - the row's `marked_ms`, an integer; defaults to
      `System.monotonic_time(:millisecond)`

      iex> t = Tollgate.Credits.new()
      iex> {:ok, {n, e} = token} = Tollgate.Credits.reserve(t, :general)
      iex> Tollgate.Credits.enqueue(t, token, "p", now_ms: -7)
      :ok
      iex> Tollgate.Credits.enqueued(t)
      [{n, e, -7, "p"}]
  """
  @spec enqueue(:ets.tid(), token(), payload(), keyword()) :: :ok | {:error, :lost | :no_table}
  def enqueue(t, token, payload, opts) do
    {n, epoch} = token!(:enqueue, token)

    unless is_list(opts) do
      raise ArgumentError, "enqueue: options must be a keyword list, got: #{inspect(opts)}"
    end

    now =
      case Keyword.fetch(opts, :now_ms) do
        {:ok, now} when is_integer(now) ->
          now

        {:ok, now} ->
          raise ArgumentError, ":now_ms must be an integer, got: #{inspect(now)} (enqueue)"

        :error ->
          System.monotonic_time(:millisecond)
      end

    me = self()

    guarded(t, {:error, :no_table}, fn ->
      spec = [
        {{n, :reserved, :"$1", me, epoch, :_, nil}, [], [{{n, :enqueued, :"$1", me, epoch, now, {:const, payload}}}]}
      ]

      case :ets.select_replace(t, spec) do
        1 -> :ok
        0 -> {:error, :lost}
      end
    end)
  end

  @doc """
  Atomically claim one enqueued slot for processing — `enqueued →
  processing` in one CAS, returning the stored payload.
  `{:ok, payload}` | `:none`.

  The payload stays in the row until `finish/2`. Any process may take (the
  owner does).

      iex> t = Tollgate.Credits.new()
      iex> {:ok, {n, e} = token} = Tollgate.Credits.reserve(t, :general)
      iex> Tollgate.Credits.take(t, n, e)
      :none
      iex> :ok = Tollgate.Credits.enqueue(t, token, :req)
      iex> Tollgate.Credits.take(t, n, e)
      {:ok, :req}
      iex> Tollgate.Credits.take(t, n, e)
      :none
  """
  @spec take(:ets.tid(), non_neg_integer(), non_neg_integer()) :: {:ok, payload()} | :none
  def take(t, n, epoch) do
    {n, epoch} = token!(:take, {n, epoch})

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

  @doc """
  Owner-side free once the request is consumed (replied or refused).

  Matched on `{n, epoch}`: frees `:processing` (normal) and, defensively,
  `:enqueued` rows, so a slot listed twice across a poll boundary still
  drains to `:free` exactly once. Always `:ok`; `finish_count/2` says whether
  this call freed the row.
  """
  @spec finish(:ets.tid(), token()) :: :ok
  def finish(t, token) do
    _ = finish_count(t, token)
    :ok
  end

  @doc """
  `finish/2`, answering `1` if this call freed the row and `0` otherwise
  (an addition to the seed's API).

      iex> t = Tollgate.Credits.new()
      iex> {:ok, {n, e} = token} = Tollgate.Credits.reserve(t, :general)
      iex> :ok = Tollgate.Credits.enqueue(t, token, :req)
      iex> {:ok, :req} = Tollgate.Credits.take(t, n, e)
      iex> Tollgate.Credits.finish_count(t, token)
      1
      iex> Tollgate.Credits.finish_count(t, token)
      0
  """
  @spec finish_count(:ets.tid(), token()) :: 0 | 1
  def finish_count(t, token) do
    {n, epoch} = token!(:finish, token)

    guarded(t, 0, fn ->
      spec = [
        {{n, :"$1", :_, :_, epoch, :_, :_}, [{:orelse, {:"=:=", :"$1", :processing}, {:"=:=", :"$1", :enqueued}}],
         [{:const, free(n)}]}
      ]

      :ets.select_replace(t, spec)
    end)
  end

  @doc """
  Caller-side free of a reservation that was never enqueued — used when the
  owner could not be resolved. Epoch- and holder-pinned (only the process
  that reserved can release); at most once. Always `:ok`;
  `release_count/2` says whether this call freed the row.
  """
  @spec release(:ets.tid(), token()) :: :ok
  def release(t, token) do
    _ = release_count(t, token)
    :ok
  end

  @doc """
  `release/2`, answering `1` if this call freed the row and `0` otherwise
  (an addition to the seed's API).

      iex> t = Tollgate.Credits.new()
      iex> {:ok, token} = Tollgate.Credits.reserve(t, :general)
      iex> Tollgate.Credits.release_count(t, token)
      1
      iex> Tollgate.Credits.release_count(t, token)
      0
  """
  @spec release_count(:ets.tid(), token()) :: 0 | 1
  def release_count(t, token) do
    {n, epoch} = token!(:release, token)
    me = self()

    guarded(t, 0, fn ->
      :ets.select_replace(t, [{{n, :reserved, :_, me, epoch, :_, nil}, [], [{:const, free(n)}]}])
    end)
  end

  @doc """
  Reclaim `:reserved` slots whose holder died between reserve and enqueue —
  the only state without an installed payload. `:enqueued` and
  `:processing` rows are left to the owner, which always consumes them.
  Returns the number reclaimed.

      iex> t = Tollgate.Credits.new()
      iex> holder = spawn(fn -> {:ok, _token} = Tollgate.Credits.reserve(t, :general) end)
      iex> ref = Process.monitor(holder)
      iex> receive do: ({:DOWN, ^ref, :process, _, _} -> :holder_died)
      :holder_died
      iex> Tollgate.Credits.sweep(t)
      1
  """
  @spec sweep(:ets.tid()) :: non_neg_integer()
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

  @doc """
  List currently `:enqueued` slots as `{n, epoch, marked_ms, payload}`,
  ordered by `marked_ms`, ties by slot (the seed: "oldest enqueue first").
  Read-only view for the owner's eligibility scan; consumption is still the
  CAS in `take/3`.
  """
  @spec enqueued(:ets.tid()) :: [{non_neg_integer(), non_neg_integer(), integer(), payload()}]
  def enqueued(t) do
    guarded(t, [], fn ->
      :ets.select(t, [
        {{:"$1", :enqueued, :_, :_, :"$2", :"$3", :"$4"}, [], [{{:"$1", :"$2", :"$3", :"$4"}}]}
      ])
      |> Enum.sort_by(fn {n, _, marked, _} -> {marked, n} end)
    end)
  end

  @doc """
  Current per-class usage and queue-state counts — for health/evidence:
  `%{general: counts, internal: counts}`, each `counts` a map of `:free`,
  `:reserved`, `:enqueued` and `:processing` summing to the class's bound.
  """
  @spec snapshot(:ets.tid()) :: map()
  def snapshot(t) do
    zero = %{free: 0, reserved: 0, enqueued: 0, processing: 0}

    guarded(t, %{general: zero, internal: zero}, fn ->
      Enum.reduce(1..32, %{general: zero, internal: zero}, fn n, acc ->
        [{^n, state, class, _, _, _, _}] = :ets.lookup(t, n)
        update_in(acc, [class, state], &(&1 + 1))
      end)
    end)
  end

  defp token!(_fun, {n, epoch} = token)
       when is_integer(n) and n >= 1 and n <= 32 and is_integer(epoch) and epoch > 0,
       do: token

  defp token!(fun, token) do
    raise ArgumentError,
          "#{fun}: the token must be {slot, epoch} as reserve/2 returned it " <>
            "(slot an integer in 1..32, epoch a positive integer), got: #{inspect(token)}"
  end
end
