#!lua name=tollgate_cr
-- tollgate library version 3
-- (Raise it with every change to this file: rconn.Load refuses to replace a
-- newer version, and to load another text under the same version. Every
-- function is registered with the version's suffix, "_v3": a process of
-- another version calls functions of its own version, never these.)

-- The credit table of tollgate on Redis (spec/credits.md, "The Redis
-- backend"). Every function is one transition of one table, run by Redis
-- to completion with nothing in between, so each is atomic and each
-- linearizes where it runs. Every function checks all of its arguments and
-- the row before its first write: a refusal or an error reply writes
-- nothing.
--
-- Keys (both under one hash tag, the table's name, so one table lives in
-- one cluster slot):
--
--   KEYS[1]  tollgate:cr:{name}:rows    hash, the table
--   KEYS[2]  tollgate:cr:{name}:leases  hash, holder id -> lease expiry (ms)
--
-- Fields of the rows hash, for each slot n in 1..32:
--
--   g:n  the slot's generation: the number of reservations it has handed
--        out (absent = 0). Only reserve raises it, by one, and nothing
--        lowers or deletes it, so a reservation's (n, g:n) is never handed
--        out again (C3). The epoch a caller sees is g << 5 | n - 1.
--   s:n  the state: "r" reserved, "e" enqueued, "p" processing; absent =
--        free.
--   h:n  the reserving holder's id (reserved, enqueued, processing).
--   m:n  the enqueue's mark, a decimal int64 (enqueued, processing).
--   p:n  the payload (enqueued, processing): present exactly when s:n is
--        "e" or "p" (C4).
--
-- and "closed" = "1" once the table is closed (C11); it is never removed.
--
-- A row moves only along
--
--   free        -> reserved    tollgate_cr_reserve   g:n + 1, s:n = r, h:n
--   reserved    -> enqueued    tollgate_cr_enqueue   s:n = e, m:n, p:n
--   enqueued    -> processing  tollgate_cr_take      s:n = p
--   processing  -> free        tollgate_cr_finish    s:n h:n m:n p:n deleted
--   enqueued    -> free        tollgate_cr_finish    (defensive, C8)
--   reserved    -> free        tollgate_cr_release   s:n h:n deleted
--   reserved    -> free        tollgate_cr_sweep     the holder's lease expired
--
-- Arguments arrive only as KEYS and ARGV, never in this source, and are
-- compared byte for byte: a payload is stored as it came.

local SLOTS, GENERAL = 32, 26
-- The largest generation a slot hands out: 2^48 - 1, so that every epoch,
-- g << 5 | n - 1, is below 2^53 and exact in a Lua number.
local MAXGEN = 281474976710655

-- Results, as impl/credits numbers them.
local OK, EXHAUSTED, LOST, NOTABLE = 0, 1, 2, 3

local function argerr(field, rule)
  return redis.error_reply('ERR tollgate_cr: ' .. field .. ' ' .. rule)
end

-- A holder id is 32 lower-case hex digits (128 bits).
local function is_holder(h)
  return type(h) == 'string' and #h == 32 and string.find(h, '^[0-9a-f]+$') ~= nil
end

-- slot returns the slot number of a decimal string in 1..32, or nil.
local function slot(s)
  if type(s) ~= 'string' or string.find(s, '^[1-9][0-9]?$') == nil then
    return nil
  end
  local n = tonumber(s)
  if n > SLOTS then
    return nil
  end
  return n
end

-- A generation argument is canonical decimal ("0" pins nothing: no slot
-- hands out generation 0), compared as a string with g:n.
local function is_gen(s)
  return type(s) == 'string' and #s <= 15 and (s == '0' or string.find(s, '^[1-9][0-9]*$') ~= nil)
end

-- icmp compares two canonical decimal int64 strings exactly (Lua numbers
-- are doubles, which are not exact beyond 2^53).
local function icmp(a, b)
  local na, nb = string.sub(a, 1, 1) == '-', string.sub(b, 1, 1) == '-'
  if na ~= nb then
    return na and -1 or 1
  end
  local r
  if a == b then
    return 0
  elseif #a ~= #b then
    r = (#a < #b) and -1 or 1
  else
    r = (a < b) and -1 or 1
  end
  if na then
    r = -r
  end
  return r
end

-- MAX_AHEAD_MS is how far the clock a sweep or a renewal is given may run
-- ahead of the server's (credits.MaxClockAheadMs). Leases are judged on
-- the callers' clock, so that a checker replays a sweep exactly; this bound
-- keeps that clock honest: a caller whose clock runs far ahead cannot free
-- a reservation whose lease runs more than MAX_AHEAD_MS past the server's
-- clock, nor set a lease no sweep reaches.
local MAX_AHEAD_MS = 10000

-- MAX_LEASE_MS is the longest lease a renewal may set (Go's MaxLeaseMs):
-- its expiry may not run past the server's clock by more than
-- MAX_AHEAD_MS + MAX_LEASE_MS, so every lease ends at a time some sweep
-- may be given, and a holder that stops renewing has its reservations
-- freed within that bound.
local MAX_LEASE_MS = 3600000

-- ahead refuses now, a canonical decimal int64 in milliseconds, when it
-- runs more than MAX_AHEAD_MS ahead of the server's clock: an error reply
-- naming now_ms, or nil. TIME is allowed in a function: Redis 7 replicates
-- a function's writes, not the call, so replicas never read their own
-- clock here.
-- server_ms is the server's clock in milliseconds since 1970: seconds and
-- microseconds from TIME; milliseconds since 1970 stay far below 2^53, so
-- the sum is exact and %d prints it whole.
local function server_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function ahead(now)
  local server = server_ms()
  local limit = string.format('%d', server + MAX_AHEAD_MS)
  if icmp(now, limit) > 0 then
    return redis.error_reply('ERR tollgate_cr: now_ms ' .. now .. ' runs ahead of the server\'s clock (' ..
      string.format('%d', server) .. ' ms) by more than ' .. MAX_AHEAD_MS .. ' ms')
  end
  return nil
end

-- is_int64 reports whether s is a canonical decimal int64.
local function is_int64(s)
  if type(s) ~= 'string' then
    return false
  end
  if s == '0' then
    return true
  end
  if string.find(s, '^-?[1-9][0-9]*$') == nil or #s > 20 then
    return false
  end
  if string.sub(s, 1, 1) == '-' then
    return #s < 20 or s <= '-9223372036854775808'
  end
  return #s < 19 or (#s == 19 and s <= '9223372036854775807')
end

-- LIVE is the marker field tollgate_cr_open puts in both keys of a live
-- table ('live' is no holder id, and no slot field): in the rows hash with
-- the value 1, in the leases hash with the largest int64 as its expiry, so
-- that no sweep forgets it and the leases hash never empties.
local LIVE, LIVE_EXPIRY = 'live', '9223372036854775807'

-- has_closed reports whether the table was closed (destroyed).
local function has_closed(rows)
  return redis.call('HEXISTS', rows, 'closed') == 1
end

-- is_closed reports whether the table of keys (rows, leases) was closed;
-- on a live table whose marker is gone from either key it raises an error
-- reply instead, before any write: the table's state was evicted, deleted
-- or lost (a key evicted under maxmemory, FLUSHALL, a failover to a replica
-- that lacks it), and going on would issue epochs already issued (C3) and
-- sweep live holders (C10).
local function is_closed(keys)
  local m = redis.call('HMGET', keys[1], 'closed', LIVE)
  if m[1] then
    return true
  end
  if not m[2] or redis.call('HEXISTS', keys[2], LIVE) == 0 then
    error(redis.error_reply('ERR tollgate_cr: state lost: the table\'s ' .. (m[2] and 'leases' or 'rows') ..
      ' key has no live marker (evicted under maxmemory, deleted, flushed, or lost in a failover); ' ..
      'refusing rather than issue epochs again'))
  end
  return false
end

-- row returns slot n's state, generation and holder (false when absent).
local function row(rows, n)
  local r = redis.call('HMGET', rows, 's:' .. n, 'g:' .. n, 'h:' .. n)
  return r[1], r[2], r[3]
end

-- pinned reports whether slot n holds the reservation of generation gen in
-- state st (C3: every transition after reserve matches the epoch).
local function pinned(st, g, want_st, gen)
  return st == want_st and g == gen
end

-- tollgate_cr_reserve(rows; holder, class) -> {result, slot, generation}
-- Claims the lowest free slot of the class (1 general, 2 internal) for the
-- holder under the slot's next generation (C1, C2, C3). Exhausted is exact:
-- the function sees every slot of the class at one instant.
local function reserve(keys, args)
  local rows, h, c = keys[1], args[1], args[2]
  if not is_holder(h) then
    return argerr('holder', 'must be 32 lower-case hex digits')
  end
  local first, last
  if c == '1' then
    first, last = 1, GENERAL
  elseif c == '2' then
    first, last = GENERAL + 1, SLOTS
  else
    return argerr('class', 'must be 1 (general) or 2 (internal)')
  end
  if is_closed(keys) then
    return {NOTABLE, 0, 0}
  end
  local fields = {}
  for n = first, last do
    fields[#fields + 1] = 's:' .. n
  end
  local states = redis.call('HMGET', rows, unpack(fields))
  for i = 1, #states do
    if not states[i] then
      local n = first + i - 1
      local g = redis.call('HGET', rows, 'g:' .. n)
      local gen = tonumber(g or '0')
      if gen == nil or gen >= MAXGEN then
        return redis.error_reply('ERR tollgate_cr: slot ' .. n .. ' has handed out its last generation (' ..
          tostring(g) .. '); another reservation would repeat an epoch (C3)')
      end
      -- free -> reserved: the slot's next generation, the holder, one step.
      gen = redis.call('HINCRBY', rows, 'g:' .. n, 1)
      redis.call('HSET', rows, 's:' .. n, 'r', 'h:' .. n, h)
      return {OK, n, gen}
    end
  end
  return {EXHAUSTED, 0, 0}
end

-- tollgate_cr_enqueue(rows; holder, slot, generation, mark, payload) -> result
-- Publishes the payload and the state together (C4, C5): only for the
-- holder that reserved, under that generation, from reserved.
local function enqueue(keys, args)
  local rows, h, n, gen, mark, payload = keys[1], args[1], slot(args[2]), args[3], args[4], args[5]
  if not is_holder(h) then
    return argerr('holder', 'must be 32 lower-case hex digits')
  end
  if n == nil then
    return argerr('slot', 'must be in 1..32')
  end
  if not is_gen(gen) then
    return argerr('generation', 'must be a decimal below 10^15')
  end
  if not is_int64(mark) then
    return argerr('marked_ms', 'must be a decimal int64')
  end
  if type(payload) ~= 'string' then
    return argerr('payload', 'is missing')
  end
  if is_closed(keys) then
    return NOTABLE
  end
  local st, g, holder = row(rows, n)
  if not pinned(st, g, 'r', gen) or holder ~= h then
    return LOST
  end
  -- reserved -> enqueued, with the payload and its mark, in one write.
  redis.call('HSET', rows, 's:' .. n, 'e', 'm:' .. n, mark, 'p:' .. n, payload)
  return OK
end

-- tollgate_cr_take(rows; slot, generation) -> {1, payload} or {0}
local function take(keys, args)
  local rows, n, gen = keys[1], slot(args[1]), args[2]
  if n == nil then
    return argerr('slot', 'must be in 1..32')
  end
  if not is_gen(gen) then
    return argerr('generation', 'must be a decimal below 10^15')
  end
  if is_closed(keys) then
    return {0}
  end
  local st, g = row(rows, n)
  if not pinned(st, g, 'e', gen) then
    return {0}
  end
  local payload = redis.call('HGET', rows, 'p:' .. n)
  -- enqueued -> processing; the payload stays in the row (C6, C7).
  redis.call('HSET', rows, 's:' .. n, 'p')
  return {1, payload}
end

-- tollgate_cr_finish(rows; slot, generation) -> 1 freed, 0 not
local function finish(keys, args)
  local rows, n, gen = keys[1], slot(args[1]), args[2]
  if n == nil then
    return argerr('slot', 'must be in 1..32')
  end
  if not is_gen(gen) then
    return argerr('generation', 'must be a decimal below 10^15')
  end
  if is_closed(keys) then
    return 0
  end
  local st, g = row(rows, n)
  if not (pinned(st, g, 'p', gen) or pinned(st, g, 'e', gen)) then
    return 0
  end
  -- processing (or enqueued) -> free: the owner consumed the row (C8).
  redis.call('HDEL', rows, 's:' .. n, 'h:' .. n, 'm:' .. n, 'p:' .. n)
  return 1
end

-- tollgate_cr_release(rows; holder, slot, generation) -> 1 freed, 0 not
local function release(keys, args)
  local rows, h, n, gen = keys[1], args[1], slot(args[2]), args[3]
  if not is_holder(h) then
    return argerr('holder', 'must be 32 lower-case hex digits')
  end
  if n == nil then
    return argerr('slot', 'must be in 1..32')
  end
  if not is_gen(gen) then
    return argerr('generation', 'must be a decimal below 10^15')
  end
  if is_closed(keys) then
    return 0
  end
  local st, g, holder = row(rows, n)
  if not pinned(st, g, 'r', gen) or holder ~= h then
    return 0
  end
  -- reserved -> free, by the holder itself (C9).
  redis.call('HDEL', rows, 's:' .. n, 'h:' .. n)
  return 1
end

-- tollgate_cr_sweep(rows, leases; now_ms) -> number of rows freed
-- Frees every reserved row whose holder holds no lease, or one that expired
-- at or before now_ms (C10), and forgets every expired lease. Enqueued and
-- processing rows are never swept.
local function sweep(keys, args)
  local rows, leases, now = keys[1], keys[2], args[1]
  if not is_int64(now) then
    return argerr('now_ms', 'must be a decimal int64')
  end
  local refused = ahead(now)
  if refused then
    return refused
  end
  if is_closed(keys) then
    return 0
  end
  local fields = {}
  for n = 1, SLOTS do
    fields[n] = 's:' .. n
  end
  local states = redis.call('HMGET', rows, unpack(fields))
  local free = {}
  for n = 1, SLOTS do
    if states[n] == 'r' then
      local h = redis.call('HGET', rows, 'h:' .. n)
      local exp = h and redis.call('HGET', leases, h)
      if not exp or icmp(exp, now) <= 0 then
        free[#free + 1] = n
      end
    end
  end
  local expired = {}
  local all = redis.call('HGETALL', leases)
  for i = 1, #all, 2 do
    if icmp(all[i + 1], now) <= 0 then
      expired[#expired + 1] = all[i]
    end
  end
  -- Every check is done; now the writes.
  for _, n in ipairs(free) do
    -- reserved -> free: the holder's lease is gone.
    redis.call('HDEL', rows, 's:' .. n, 'h:' .. n)
  end
  for i = 1, #expired, 1000 do
    redis.call('HDEL', leases, unpack(expired, i, math.min(i + 999, #expired)))
  end
  return #free
end

-- tollgate_cr_renew(rows, leases; holder, expiry_ms, now_ms) -> result
-- The holder's lease runs until expiry_ms (exclusive) on the callers'
-- clock, which reads now_ms. NoTable, writing nothing, on a closed table.
local function renew(keys, args)
  local rows, leases, h, exp, now = keys[1], keys[2], args[1], args[2], args[3]
  if not is_holder(h) then
    return argerr('holder', 'must be 32 lower-case hex digits')
  end
  if not is_int64(exp) then
    return argerr('expiry_ms', 'must be a decimal int64')
  end
  if not is_int64(now) then
    return argerr('now_ms', 'must be a decimal int64')
  end
  local refused = ahead(now)
  if refused then
    return refused
  end
  if icmp(exp, string.format('%d', server_ms() + MAX_AHEAD_MS + MAX_LEASE_MS)) > 0 then
    return argerr('expiry_ms', 'must not run past the server\'s clock by more than ' ..
      (MAX_AHEAD_MS + MAX_LEASE_MS) .. ' ms (MaxClockAheadMs + MaxLeaseMs): no sweep could end such a lease')
  end
  if is_closed(keys) then
    return NOTABLE
  end
  redis.call('HSET', leases, h, exp)
  return OK
end

-- tollgate_cr_drop(rows, leases; holder) -> 1 if a lease was dropped
local function drop(keys, args)
  local rows, leases, h = keys[1], keys[2], args[1]
  if not is_holder(h) then
    return argerr('holder', 'must be 32 lower-case hex digits')
  end
  if is_closed(keys) then
    return 0
  end
  return redis.call('HDEL', leases, h)
end

-- tollgate_cr_enqueued(rows) -> {slot, generation, mark, payload, ...} in
-- slot order; the caller sorts by mark (C13). One instant: atomic.
local function enqueued(keys, args)
  local rows = keys[1]
  if is_closed(keys) then
    return {}
  end
  local fields = {}
  for n = 1, SLOTS do
    fields[n] = 's:' .. n
  end
  local states = redis.call('HMGET', rows, unpack(fields))
  local out = {}
  for n = 1, SLOTS do
    if states[n] == 'e' then
      local r = redis.call('HMGET', rows, 'g:' .. n, 'm:' .. n, 'p:' .. n)
      out[#out + 1] = n
      out[#out + 1] = r[1]
      out[#out + 1] = r[2]
      out[#out + 1] = r[3]
    end
  end
  return out
end

-- tollgate_cr_snapshot(rows) -> free, reserved, enqueued, processing of the
-- general class, then of the internal class (C14), then 1 if the table is
-- closed (every count 0) else 0.
local function snapshot(keys, args)
  local rows = keys[1]
  local out = {0, 0, 0, 0, 0, 0, 0, 0, 0}
  if is_closed(keys) then
    out[9] = 1
    return out
  end
  local fields = {}
  for n = 1, SLOTS do
    fields[n] = 's:' .. n
  end
  local states = redis.call('HMGET', rows, unpack(fields))
  local index = {r = 2, e = 3, p = 4}
  for n = 1, SLOTS do
    local i = index[states[n]] or 1
    if n > GENERAL then
      i = i + 4
    end
    out[i] = out[i] + 1
  end
  return out
end

-- tollgate_cr_close(rows, leases) -> 1
-- The table is gone (C11): closed is set for good, every row and payload
-- and every lease deleted; the generations stay.
local function close(keys, args)
  local rows, leases = keys[1], keys[2]
  local fields = {}
  for n = 1, SLOTS do
    fields[#fields + 1] = 's:' .. n
    fields[#fields + 1] = 'h:' .. n
    fields[#fields + 1] = 'm:' .. n
    fields[#fields + 1] = 'p:' .. n
  end
  fields[#fields + 1] = LIVE
  redis.call('HSET', rows, 'closed', '1')
  redis.call('HDEL', rows, unpack(fields))
  redis.call('DEL', leases)
  return 1
end

-- tollgate_cr_closed(rows) -> 1 closed, 0 live
local function closed(keys, args)
  return has_closed(keys[1]) and 1 or 0
end

-- tollgate_cr_open(rows, leases) -> 1 marked live now, 0 already live,
-- 3 (NOTABLE) closed
-- Marks a table live in both keys (LIVE), as New does when it opens one. A
-- table with the marker in one key and not the other lost the other key:
-- an error reply, and nothing written.
local function open(keys, args)
  local rows, leases = keys[1], keys[2]
  local m = redis.call('HMGET', rows, 'closed', LIVE)
  if m[1] then
    return NOTABLE
  end
  local in_leases = redis.call('HEXISTS', leases, LIVE) == 1
  if m[2] and in_leases then
    return 0
  end
  if m[2] or in_leases then
    return redis.error_reply('ERR tollgate_cr: state lost: the table\'s ' .. (m[2] and 'leases' or 'rows') ..
      ' key has no live marker (evicted under maxmemory, deleted, flushed, or lost in a failover)')
  end
  redis.call('HSET', rows, LIVE, '1')
  redis.call('HSET', leases, LIVE, LIVE_EXPIRY)
  return 1
end

redis.register_function('tollgate_cr_reserve_v3', reserve)
redis.register_function('tollgate_cr_enqueue_v3', enqueue)
redis.register_function('tollgate_cr_take_v3', take)
redis.register_function('tollgate_cr_finish_v3', finish)
redis.register_function('tollgate_cr_release_v3', release)
redis.register_function('tollgate_cr_sweep_v3', sweep)
redis.register_function('tollgate_cr_renew_v3', renew)
redis.register_function('tollgate_cr_drop_v3', drop)
redis.register_function{function_name = 'tollgate_cr_enqueued_v3', callback = enqueued, flags = {'no-writes'}}
redis.register_function{function_name = 'tollgate_cr_snapshot_v3', callback = snapshot, flags = {'no-writes'}}
redis.register_function('tollgate_cr_close_v3', close)
redis.register_function{function_name = 'tollgate_cr_closed_v3', callback = closed, flags = {'no-writes'}}
redis.register_function('tollgate_cr_open_v3', open)
