# The seeds' module names, for applications whose code names them. Off by
# default, because an application that still depends on the seed's own
# library would then have two modules of one name; switch them on in the
# application's config (config/config.exs):
#
#     config :tollgate, seed_modules: true
#
# Each function delegates to the Tollgate module, so both names run the same
# code (the code `tollgate conform` checks through the driver).
if Application.compile_env(:tollgate, :seed_modules, false) do
  defmodule Raxol.Core.TokenBucket do
    @moduledoc """
    The seed's name for `Tollgate.TokenBucket` (compiled when
    `config :tollgate, seed_modules: true`). Every function delegates; see
    `Tollgate.TokenBucket` for the documentation and the departures.
    """

    @typedoc "A bucket key: any term."
    @type key() :: Tollgate.TokenBucket.key()

    @typedoc "A bucket table."
    @type table() :: Tollgate.TokenBucket.table()

    @doc "Create a bucket table. See `Tollgate.TokenBucket.new/1`."
    @spec new(atom()) :: :ets.table()
    defdelegate new(name \\ Tollgate.TokenBucket), to: Tollgate.TokenBucket

    @doc "Take tokens from a bucket. See `Tollgate.TokenBucket.take/3`."
    @spec take(table(), key(), keyword()) :: {:ok, float()} | {:error, :rate_limited}
    defdelegate take(table, key, opts), to: Tollgate.TokenBucket

    @doc "Tokens currently available. See `Tollgate.TokenBucket.peek/3`."
    @spec peek(table(), key(), keyword()) :: float()
    defdelegate peek(table, key, opts), to: Tollgate.TokenBucket

    @doc "Milliseconds until `:cost` tokens are available. See `Tollgate.TokenBucket.retry_after/3`."
    @spec retry_after(table(), key(), keyword()) :: non_neg_integer()
    defdelegate retry_after(table, key, opts), to: Tollgate.TokenBucket

    @doc "Forget a bucket. See `Tollgate.TokenBucket.reset/2`."
    @spec reset(table(), key()) :: :ok
    defdelegate reset(table, key), to: Tollgate.TokenBucket

    @doc "Forget every bucket in the table. See `Tollgate.TokenBucket.reset_all/1`."
    @spec reset_all(table()) :: :ok
    defdelegate reset_all(table), to: Tollgate.TokenBucket
  end

  defmodule DrinkMeAlice.Credits do
    @moduledoc """
    The seed's name for `Tollgate.Credits` (compiled when
    `config :tollgate, seed_modules: true`). Every function delegates; see
    `Tollgate.Credits` for the documentation and the departures.
    """

    @typedoc "The two classes."
    @type class() :: Tollgate.Credits.class()

    @typedoc "A request payload."
    @type payload() :: Tollgate.Credits.payload()

    @typedoc "One reservation: `{slot, epoch}`."
    @type token() :: Tollgate.Credits.token()

    @doc "The declared split. See `Tollgate.Credits.bounds/0`."
    @spec bounds() :: map()
    defdelegate bounds(), to: Tollgate.Credits

    @doc "Create the slot table. See `Tollgate.Credits.new/0`."
    @spec new() :: :ets.tid()
    defdelegate new(), to: Tollgate.Credits

    @doc "Claim a free slot of `class`. See `Tollgate.Credits.reserve/2`."
    @spec reserve(:ets.tid(), class()) :: {:ok, token()} | {:error, :exhausted | :no_table}
    defdelegate reserve(t, class), to: Tollgate.Credits

    @doc "Publish the payload, `reserved → enqueued`. See `Tollgate.Credits.enqueue/3`."
    @spec enqueue(:ets.tid(), token(), payload()) :: :ok | {:error, :lost | :no_table}
    defdelegate enqueue(t, token, payload), to: Tollgate.Credits

    @doc "Claim one enqueued slot for processing. See `Tollgate.Credits.take/3`."
    @spec take(:ets.tid(), non_neg_integer(), non_neg_integer()) :: {:ok, payload()} | :none
    defdelegate take(t, n, epoch), to: Tollgate.Credits

    @doc "Owner-side free. See `Tollgate.Credits.finish/2`."
    @spec finish(:ets.tid(), token()) :: :ok
    defdelegate finish(t, token), to: Tollgate.Credits

    @doc "Caller-side free of a reservation never enqueued. See `Tollgate.Credits.release/2`."
    @spec release(:ets.tid(), token()) :: :ok
    defdelegate release(t, token), to: Tollgate.Credits

    @doc "Reclaim reserved slots of dead holders. See `Tollgate.Credits.sweep/1`."
    @spec sweep(:ets.tid()) :: non_neg_integer()
    defdelegate sweep(t), to: Tollgate.Credits

    @doc "The enqueued slots. See `Tollgate.Credits.enqueued/1`."
    @spec enqueued(:ets.tid()) :: [{non_neg_integer(), non_neg_integer(), integer(), payload()}]
    defdelegate enqueued(t), to: Tollgate.Credits

    @doc "Per-class counts. See `Tollgate.Credits.snapshot/1`."
    @spec snapshot(:ets.tid()) :: map()
    defdelegate snapshot(t), to: Tollgate.Credits
  end
end
