defmodule Tollgate.Driver do
  @moduledoc """
  The stdio driver of the Elixir port (spec/protocol.md, protocol 2).

  It checks the port through its public API: each request becomes one call
  of `Tollgate.TokenBucket` or `Tollgate.Credits` with the arguments and
  options a user would pass, and the answer is that call's result in the
  protocol's words. The API's `ArgumentError` is the protocol's
  `invalid_argument` (token bucket, T9; the field is the option the message
  names) or `bad_request` (credit-table defects, C12).

  The main process reads one JSON request per line from stdin. A request
  naming a `client` runs in that client's own process (spawned on first
  use), so requests of different clients really overlap and a client's
  process is the holder of its credit reservations (the seed's "calling
  process"); other requests run in the main process. Every process writes
  its own answers; answers may come out of order. `cr.exit` kills the
  client's process; `cr.close` kills the table's owner process, which takes
  the ETS table with it. Logs go to stderr.
  """

  alias Tollgate.{Credits, JSON, TokenBucket}

  @tb_ops ~w(tb.take tb.admit tb.peek tb.retry_after tb.reset tb.reset_all tb.reclaim)
  @cr_ops ~w(cr.new cr.reserve cr.enqueue cr.take cr.finish cr.release cr.sweep cr.enqueued cr.snapshot cr.bounds cr.exit cr.close)
  @holder_ops ~w(cr.reserve cr.enqueue cr.release cr.exit)
  @min_i64 -9_223_372_036_854_775_808
  @max_i64 9_223_372_036_854_775_807

  @doc "Serves stdin until end of input, then halts the VM (status 0)."
  @spec main() :: no_return()
  def main do
    # Raw bytes both ways: requests are UTF-8 JSON and answers are written
    # as they were encoded.
    :ok = :io.setopts(:standard_io, binary: true, encoding: :latin1)
    loop(%{tb: %{}, cr: %{}, clients: %{}, dead: MapSet.new()})
  end

  defp loop(st) do
    case IO.binread(:stdio, :line) do
      data when is_binary(data) ->
        line = String.trim_trailing(data, "\n")
        st = if String.trim(line) == "", do: st, else: handle(line, st)
        loop(st)

      _eof_or_error ->
        # Wait for every client to finish what it was given, then stop.
        for {_, pid} <- st.clients, Process.alive?(pid) do
          ref = Process.monitor(pid)
          send(pid, {:sync, self(), ref})

          receive do
            {:synced, ^ref} -> :ok
            {:DOWN, ^ref, _, _, _} -> :ok
          end
        end

        System.halt(0)
    end
  end

  defp reply(id, map), do: IO.binwrite(:stdio, [JSON.encode(Map.put(map, "id", id)), ?\n])

  defp bad(msg), do: %{"ok" => false, "error" => "bad_request", "message" => msg}

  defp handle(line, st) do
    case JSON.decode(line) do
      {:ok, %{"id" => id, "op" => op} = req} when is_integer(id) and is_binary(op) ->
        dispatch(id, op, req, st)

      {:ok, %{"id" => id}} when is_integer(id) ->
        reply(id, bad("field op is required (a string)"))
        st

      {:ok, _} ->
        reply(0, bad("a request is an object with an integer id and a string op"))
        st

      {:error, msg} ->
        reply(0, bad("malformed request: " <> msg))
        st
    end
  end

  defp dispatch(id, "hello", _req, st) do
    reply(id, %{
      "ok" => true,
      "protocol" => 2,
      "primitives" => ["tb", "cr"],
      "ops" => ["tb.admit"],
      "name" => "tollgate-elixir-ets"
    })

    st
  end

  defp dispatch(id, op, req, st) when op in @tb_ops or op in @cr_ops do
    client = Map.get(req, "client")
    table = Map.get(req, "table")

    cond do
      client != nil and not (is_binary(client) and client != "") ->
        reply(id, bad("field client must be a non-empty string"))
        st

      not (is_binary(table) and table != "") ->
        reply(id, bad("#{op}: field table is required (a non-empty string)"))
        st

      op in @holder_ops and client == nil ->
        reply(id, bad("#{op}: field client is required (a non-empty string)"))
        st

      client != nil and MapSet.member?(st.dead, client) ->
        # Exiting twice is harmless; a dead client issues nothing else.
        if op == "cr.exit",
          do: reply(id, %{"ok" => true}),
          else: reply(id, bad("client #{inspect(client)} has exited (cr.exit) and issues nothing more"))

        st

      op == "cr.exit" ->
        exit_client(id, client, table, st)

      op == "cr.new" ->
        new_table(id, table, st)

      op == "cr.close" ->
        close_table(id, table, st)

      op in @tb_ops ->
        {tid, st} = tb_table(table, st)
        run(id, client, fn -> tb(op, tid, req) end, st)

      true ->
        case Map.fetch(st.cr, table) do
          {:ok, {tid, _owner}} ->
            run(id, client, fn -> cr(op, tid, req) end, st)

          :error ->
            reply(id, bad("#{op}: no table #{inspect(table)} (create it with cr.new)"))
            st
        end
    end
  end

  defp dispatch(id, op, _req, st) do
    reply(id, bad("unknown operation #{inspect(op)}"))
    st
  end

  # Runs f in the client's process (or here when there is no client) and
  # answers with its result.
  defp run(id, nil, f, st) do
    reply(id, safe(f))
    st
  end

  defp run(id, client, f, st) do
    {pid, st} = client_pid(client, st)
    send(pid, {:run, id, f})
    st
  end

  defp safe(f) do
    try do
      f.()
    catch
      {:bad, msg} -> bad(msg)
    end
  end

  defp client_pid(client, st) do
    case Map.fetch(st.clients, client) do
      {:ok, pid} ->
        {pid, st}

      :error ->
        pid = spawn(fn -> client_loop() end)
        {pid, put_in(st, [:clients, client], pid)}
    end
  end

  defp client_loop do
    receive do
      {:run, id, f} ->
        reply(id, safe(f))
        client_loop()

      {:sync, from, ref} ->
        send(from, {:synced, ref})
        client_loop()
    end
  end

  defp exit_client(id, client, _table, st) do
    case Map.fetch(st.clients, client) do
      {:ok, pid} ->
        ref = Process.monitor(pid)
        Process.exit(pid, :kill)

        receive do
          {:DOWN, ^ref, _, _, _} -> :ok
        end

      :error ->
        :ok
    end

    reply(id, %{"ok" => true})
    %{st | dead: MapSet.put(st.dead, client)}
  end

  defp new_table(id, table, st) do
    if Map.has_key?(st.cr, table) do
      reply(id, bad("cr.new: table #{inspect(table)} already exists (names are used once per driver)"))
      st
    else
      parent = self()

      owner =
        spawn(fn ->
          send(parent, {:table, self(), Credits.new()})

          receive do
            :stop -> :ok
          end
        end)

      receive do
        {:table, ^owner, tid} ->
          reply(id, %{"ok" => true})
          put_in(st, [:cr, table], {tid, owner})
      end
    end
  end

  defp close_table(id, table, st) do
    case Map.fetch(st.cr, table) do
      {:ok, {tid, owner}} ->
        ref = Process.monitor(owner)
        Process.exit(owner, :kill)

        receive do
          {:DOWN, ^ref, _, _, _} -> :ok
        end

        wait_gone(tid)
        reply(id, %{"ok" => true})

      :error ->
        reply(id, bad("cr.close: no table #{inspect(table)} (create it with cr.new)"))
    end

    st
  end

  defp wait_gone(tid) do
    if :ets.info(tid) != :undefined do
      Process.sleep(1)
      wait_gone(tid)
    end
  end

  defp tb_table(name, st) do
    case Map.fetch(st.tb, name) do
      {:ok, tid} ->
        {tid, st}

      :error ->
        tid = TokenBucket.new()
        {tid, put_in(st, [:tb, name], tid)}
    end
  end

  # ---- token bucket -----------------------------------------------------------
  #
  # Each request becomes one call of the public API, with the options a user
  # would pass; the API's ArgumentError is the protocol's invalid_argument,
  # its field read from the start of the message (":cost must ...").

  defp tb("tb.reset_all", tid, _req) do
    :ok = TokenBucket.reset_all(tid)
    %{"ok" => true}
  end

  defp tb("tb.reset", tid, req) do
    :ok = TokenBucket.reset(tid, string!(req, "key"))
    %{"ok" => true}
  end

  defp tb(op, tid, req) do
    # tb.reclaim has no key, and ignores a cost (reclaim/2 ignores :cost too).
    key = if op == "tb.reclaim", do: nil, else: string!(req, "key")
    opts = [capacity: number!(req, "capacity"), refill_per_second: number!(req, "refill_per_second")]
    opts = if Map.has_key?(req, "cost") and op != "tb.reclaim", do: opts ++ [cost: number!(req, "cost")], else: opts
    opts = opts ++ [now_ms: int64!(req, "now_ms")]

    try do
      case op do
        "tb.reclaim" ->
          n = TokenBucket.reclaim(tid, opts)
          true = is_integer(n) and n >= 0
          %{"ok" => true, "reclaimed" => n}

        "tb.take" ->
          case TokenBucket.take(tid, key, opts) do
            {:ok, left} when is_float(left) -> %{"ok" => true, "remaining" => left}
            {:error, :rate_limited} -> %{"ok" => false, "error" => "rate_limited"}
          end

        "tb.admit" ->
          case TokenBucket.admit(tid, key, opts) do
            {:ok, left} when is_float(left) ->
              %{"ok" => true, "remaining" => left}

            {:error, {:rate_limited, w}} when is_integer(w) and w >= 0 ->
              %{"ok" => false, "error" => "rate_limited", "retry_after_ms" => w}
          end

        "tb.peek" ->
          tokens = TokenBucket.peek(tid, key, opts)
          true = is_float(tokens)
          %{"ok" => true, "tokens" => tokens}

        "tb.retry_after" ->
          w = TokenBucket.retry_after(tid, key, opts)
          true = is_integer(w) and w >= 0
          %{"ok" => true, "retry_after_ms" => w}
      end
    rescue
      e in ArgumentError ->
        case Regex.run(~r/^:(capacity|refill_per_second|cost) must\b/, e.message) do
          [_, field] -> %{"ok" => false, "error" => "invalid_argument", "field" => field, "message" => e.message}
          nil -> bad(e.message)
        end
    end
  end

  # ---- credit table -----------------------------------------------------------
  #
  # The same for the credit table: the API raises ArgumentError on a defect
  # (class, slot, epoch: C12), which the protocol answers bad_request. The
  # driver adds only the field checks of the protocol itself.

  defp cr(op, tid, req) do
    try do
      cr_call(op, tid, req)
    rescue
      e in ArgumentError -> bad("#{op}: " <> e.message)
    end
  end

  defp cr_call("cr.reserve", tid, req) do
    class =
      case Map.get(req, "class") do
        "general" -> :general
        "internal" -> :internal
        # Any other value goes to reserve/2 as it came, which must refuse it.
        other -> other
      end

    case Credits.reserve(tid, class) do
      {:ok, {n, epoch}} -> %{"ok" => true, "slot" => n, "epoch" => epoch}
      {:error, e} when e in [:exhausted, :no_table] -> %{"ok" => false, "error" => Atom.to_string(e)}
    end
  end

  defp cr_call("cr.enqueue", tid, req) do
    tok = token(req)
    payload = string!(req, "payload")
    now = int64!(req, "now_ms")

    case Credits.enqueue(tid, tok, payload, now_ms: now) do
      :ok -> %{"ok" => true}
      {:error, e} when e in [:lost, :no_table] -> %{"ok" => false, "error" => Atom.to_string(e)}
    end
  end

  defp cr_call("cr.take", tid, req) do
    {n, epoch} = token(req)

    case Credits.take(tid, n, epoch) do
      {:ok, payload} -> %{"ok" => true, "payload" => payload}
      :none -> %{"ok" => false, "error" => "none"}
    end
  end

  defp cr_call("cr.finish", tid, req), do: %{"ok" => true, "freed" => Credits.finish_count(tid, token(req))}
  defp cr_call("cr.release", tid, req), do: %{"ok" => true, "freed" => Credits.release_count(tid, token(req))}
  defp cr_call("cr.sweep", tid, _req), do: %{"ok" => true, "freed" => Credits.sweep(tid)}

  defp cr_call("cr.enqueued", tid, _req) do
    entries =
      for {n, epoch, marked, payload} <- Credits.enqueued(tid),
          do: %{"slot" => n, "epoch" => epoch, "marked_ms" => marked, "payload" => payload}

    %{"ok" => true, "entries" => entries}
  end

  defp cr_call("cr.snapshot", tid, _req) do
    s = Credits.snapshot(tid)
    %{"ok" => true, "general" => s.general, "internal" => s.internal}
  end

  defp cr_call("cr.bounds", _tid, _req) do
    b = Credits.bounds()
    %{"ok" => true, "general" => b.general, "internal" => b.internal, "total" => b.total}
  end

  # ---- fields -------------------------------------------------------------------

  # The token as the request gives it; the API checks it (C12).
  defp token(req), do: {Map.get(req, "slot"), Map.get(req, "epoch")}

  defp string!(req, field) do
    case Map.get(req, field) do
      s when is_binary(s) -> s
      _ -> throw({:bad, "field #{field} is required (a string)"})
    end
  end

  defp int64!(req, field) do
    case Map.get(req, field) do
      n when is_integer(n) and n >= @min_i64 and n <= @max_i64 -> n
      _ -> throw({:bad, "field #{field} is required (an integer in the int64 range)"})
    end
  end

  # A number, or one of the strings the protocol uses for non-finite values.
  defp number!(req, field) do
    case Map.get(req, field) do
      n when is_number(n) -> n
      "NaN" -> :nan
      "Infinity" -> :infinity
      "-Infinity" -> :neg_infinity
      _ -> throw({:bad, "field #{field} is required (a number, or \"NaN\", \"Infinity\", \"-Infinity\")"})
    end
  end
end
