#!lua name=tollgate_tb
-- tollgate library version 4
-- (Raise it with every change to this file: rconn.Load refuses to replace a
-- newer version, and to load another text under the same version. Every
-- function is registered with the version's suffix, "_v4": a process of
-- another version calls functions of its own version, never these.)
--
-- The server side of impl/redis/tokenbucket (spec/redis.md): one function
-- per operation that writes, and one read-only function for the reads. Go
-- loads it with rconn.Load (which replaces only an older version), after replacing every
-- "tollgate_tb" in this text with the package's library name, so a mutant's
-- copy loads beside the real library instead of over it.
--
-- A table's state lives in two keys with one hash tag, so every function
-- touches one slot:
--
--   KEYS[1]  tollgate:tb:{<table>}        hash: bucket key -> bucket
--   KEYS[2]  tollgate:tb:{<table>}:floor  string: the floor (T12)
--
-- Numbers are stored and cross the wire as their raw bytes, little-endian
-- (spec/redis.md, "Stored format"): a float64 as its 8 bytes, an int64 as
-- the 8 bytes of its two's complement, read and written with struct as two
-- 32-bit words ('<I4I4', low word first). So nothing is formatted or parsed
-- as decimal on the common path, and every float crosses bit for bit (T3):
-- struct copies a C double's bytes. A field holds one present bucket (an
-- absent one has no field) in 17 bytes, FORMAT below: the tag byte 4, the
-- tokens left after the last committed take, and the newest clock any
-- committed take carried (T4). The floor key, once a reclaim has run since
-- the table was last reset whole, holds 9 bytes: the tag 4 and the floor.
--
-- Version 3 stored a bucket as the text "<tokens> <last_ms>" (shortest
-- round-trip decimal, decimal int64) and the floor as a decimal int64. A
-- table written by version 3 is read as it is (old_bucket, old_floor: the
-- tag byte tells the formats apart, as a text begins with a digit or '-')
-- and each bucket is rewritten in this format by its next take, so an
-- upgrade needs no pass over the data. A version 3 library, loaded again
-- after a FUNCTION FLUSH, refuses this format with an error reply and
-- writes nothing.
--
-- Lua's numbers are binary64, exact only up to 2^53, so a clock is carried
-- as its two words, lo and hi (hi the high word as an unsigned number), and
-- v, its value as a number when |value| < 2^52 (then v, and the difference
-- of two such values, are exact), otherwise false; clocks beyond that are
-- compared and subtracted on the words (after, elapsed). The refill formula
-- is model/tokenbucket.go's Refill, rounded step for step in the same order
-- (T3).
--
-- Every function checks every argument and every stored value it will use
-- before its first write, and answers a refusal with an error reply and no
-- write: Redis does not roll back the writes of a script that fails.

local TWO32 = 4294967296
local TWO31 = 2147483648
local TWO20 = 1048576
local MAXF = 1.7976931348623157e308 -- math.MaxFloat64
local MAXI = '9223372036854775807'
local MINI = '9223372036854775808' -- the magnitude of math.MinInt64
local TAG = 4 -- the first byte of a stored bucket or floor of this format
local FORMAT = '<BdI4I4' -- a stored bucket: TAG, tokens, last_ms
local FLOOR = '<BI4I4' -- the stored floor: TAG, floor

-- number is the value of the clock of words lo and hi when it is below
-- 2^52 in magnitude, otherwise false.
local function number(lo, hi)
  if hi < TWO20 then
    return hi * TWO32 + lo
  elseif hi >= TWO32 - TWO20 then
    return (hi - TWO32) * TWO32 + lo
  end
  return false
end

-- biased is the high word of the clock plus 2^63: with lo, the clock's
-- order as unsigned numbers.
local function biased(hi)
  if hi >= TWO31 then return hi - TWO31 end
  return hi + TWO31
end

-- after reports whether the clock (alo, ahi, av) is later than (blo, bhi,
-- bv).
local function after(alo, ahi, av, blo, bhi, bv)
  if av and bv then
    return av > bv
  end
  local ah, bh = biased(ahi), biased(bhi)
  return ah > bh or (ah == bh and alo > blo)
end

-- elapsed is float64(ElapsedMs(last, now)) of model/tokenbucket.go:
-- max(now - last, 0), exact as an unsigned 64-bit count, then rounded once
-- to binary64. Two exact halves summed by one addition round exactly as
-- Go's conversion of the uint64 does.
local function elapsed(llo, lhi, lv, nlo, nhi, nv)
  if lv and nv then
    local d = nv - lv -- exact
    if d > 0 then return d end
    return 0
  end
  if not after(nlo, nhi, nv, llo, lhi, lv) then
    return 0
  end
  local dh, dl = biased(nhi) - biased(lhi), nlo - llo
  if dl < 0 then
    dh, dl = dh - 1, dl + TWO32
  end
  return dh * TWO32 + dl
end

-- accrue is the refill formula of model/tokenbucket.go's Refill, the one
-- place this library states it: min(tokens + (ms / 1000) * rate,
-- capacity) for ms elapsed (>= 0), each step rounded to binary64 in that
-- order (T3). (Lua 5.1 evaluates a / b * c as (a / b) * c, one VM
-- instruction per operation, so nothing is fused.) The comparison is Go's
-- min: no operand is ever NaN and tokens + accrued is never -0 (tokens and
-- accrued are both >= +0), so where they differ does not arise.
local function accrue(tokens, ms, rate, cap)
  local have = tokens + ms / 1000 * rate
  if have < cap then return have end
  return cap
end

local function fail(msg)
  error({err = 'ERR tollgate_tb: ' .. msg})
end

local function nargs(keys, args, n)
  if #keys ~= 2 or #args ~= n then
    fail('wrong number of keys or arguments')
  end
end

-- numbers unpacks the packed argument s of n bytes: the floats of fields
-- (each finite and > 0, T9), then now_ms (any 8 bytes are an int64).
local function numbers(s, n, fields)
  if #s ~= n then
    fail('the numbers argument must be ' .. n .. ' bytes: ' .. table.concat(fields, ', ') ..
      ' (float64) and now_ms (int64), little-endian')
  end
  local x = {struct.unpack(string.rep('d', #fields, '') .. 'I4I4', s)}
  for i = 1, #fields do
    if not (x[i] > 0 and x[i] <= MAXF) then
      fail(fields[i] .. ' must be finite and greater than zero')
    end
  end
  return x
end

-- isint reports whether s is a decimal int64 as Go's strconv.FormatInt
-- writes one: an optional '-', no leading zero, within the int64 range.
-- (Version 3's stored clocks.)
local function isint(s)
  if not string.find(s, '^%-?[1-9]%d*$') then
    return s == '0'
  end
  local neg = string.byte(s, 1) == 45 -- '-'
  local digits = neg and #s - 1 or #s
  if digits ~= 19 then
    return digits < 19
  end
  -- Two halves of 9 and 10 digits compare exactly as numbers (a string
  -- comparison would follow the server's collation locale).
  local d = neg and string.sub(s, 2) or s
  local bound = neg and MINI or MAXI
  local h, bh = tonumber(string.sub(d, 1, 9)), tonumber(string.sub(bound, 1, 9))
  return h < bh or (h == bh and tonumber(string.sub(d, 10)) <= tonumber(string.sub(bound, 10)))
end

-- words returns the words lo, hi of the decimal int64 s (isint).
local function words(s)
  local neg = string.byte(s, 1) == 45 -- '-'
  local hi, lo = 0, 0 -- the magnitude, as two 32-bit halves
  for i = neg and 2 or 1, #s do
    lo = lo * 10 + (string.byte(s, i) - 48)
    local carry = math.floor(lo / TWO32)
    lo = lo - carry * TWO32
    hi = hi * 10 + carry
  end
  if not neg then
    return lo, hi
  elseif lo > 0 then -- two's complement of the magnitude
    return TWO32 - lo, TWO32 - 1 - hi
  end
  return 0, (TWO32 - hi) % TWO32
end

-- old_bucket parses a bucket stored by version 3, "<tokens> <last_ms>".
local function old_bucket(v)
  local sep = string.find(v, ' ', 1, true)
  local tokens = sep and tonumber(string.sub(v, 1, sep - 1))
  local last = sep and string.sub(v, sep + 1)
  if not (tokens and tokens >= 0 and tokens <= MAXF and isint(last)) then
    fail('a stored bucket is neither 17 bytes of tag 4, tokens and last_ms nor "<tokens> <last_ms>"')
  end
  local lo, hi = words(last)
  return tokens, lo, hi, number(lo, hi)
end

-- bucket parses a stored field value into tokens and last_ms (lo, hi, v).
local function bucket(s)
  if #s == 17 then
    local tag, tokens, lo, hi = struct.unpack(FORMAT, s)
    if tag == TAG and tokens >= 0 and tokens <= MAXF then
      return tokens, lo, hi, number(lo, hi)
    end
  end
  return old_bucket(s)
end

-- floor_of reads the floor: lo, hi, v, or false.
local function floor_of(key)
  local f = redis.call('GET', key)
  if not f then
    return false
  end
  local lo, hi
  if #f == 9 and string.byte(f, 1) == TAG then
    local _
    _, lo, hi = struct.unpack(FLOOR, f)
  elseif isint(f) then -- version 3's decimal floor
    lo, hi = words(f)
  else
    fail('the stored floor is neither 9 bytes of tag 4 and an int64 nor a decimal int64')
  end
  return lo, hi, number(lo, hi)
end

-- take: ARGV key, numbers: capacity, refill_per_second and cost (float64)
-- and now_ms (int64), packed in 32 bytes ('<dddI4I4'). Replies the tokens
-- remaining when it took cost (T1), 8 bytes ('<d'), and nil when the
-- bucket did not cover it (T2: no write).
--
-- The common case is written out in line, as every call of a Lua function
-- costs the server a fraction of a microsecond: valid arguments, a bucket
-- stored by this version, and clocks below 2^52, whose values and
-- difference are exact numbers; only the refill formula is a call
-- (accrue), so that it is stated once. Anything else goes through the
-- helpers above, which raise the errors.
local function take(keys, args)
  if #keys ~= 2 or #args ~= 2 then
    nargs(keys, args, 2)
  end
  local a = args[2]
  local cap, rate, cost, nlo, nhi
  if #a == 32 then
    cap, rate, cost, nlo, nhi = struct.unpack('<dddI4I4', a)
  end
  if not (cap and cap > 0 and cap <= MAXF and rate > 0 and rate <= MAXF and cost > 0 and cost <= MAXF) then
    numbers(a, 32, {'capacity', 'refill_per_second', 'cost'})
  end
  if cost > cap then
    fail('cost must not exceed capacity')
  end
  local nv = number(nlo, nhi)
  local have, slo, shi
  local v = redis.call('HGET', keys[1], args[1])
  if v then
    local tokens, llo, lhi, lv
    if #v == 17 then
      local tag
      tag, tokens, llo, lhi = struct.unpack(FORMAT, v)
      if not (tag == TAG and tokens >= 0 and tokens <= MAXF) then
        tokens, llo, lhi, lv = old_bucket(v)
      else
        lv = number(llo, lhi)
      end
    else
      tokens, llo, lhi, lv = old_bucket(v)
    end
    if lv and nv then
      -- refill and T4 on exact numbers: elapsed = max(now - last, 0).
      local d = nv - lv
      if d > 0 then
        slo, shi = nlo, nhi
      else
        d = 0
        slo, shi = llo, lhi -- T4: the stored timestamp never moves back
      end
      have = accrue(tokens, d, rate, cap)
    else
      have = accrue(tokens, elapsed(llo, lhi, lv, nlo, nhi, nv), rate, cap)
      if after(llo, lhi, lv, nlo, nhi, nv) then -- T4
        slo, shi = llo, lhi
      else
        slo, shi = nlo, nhi
      end
    end
  else
    have = cap -- an absent bucket is full
    slo, shi = nlo, nhi
    local flo, fhi, fv = floor_of(keys[2])
    if flo and after(flo, fhi, fv, nlo, nhi, nv) then
      slo, shi = flo, fhi -- T12: nor behind the floor
    end
  end
  if have < cost then
    return false
  end
  local left = have - cost
  -- absent or present -> present(have - cost, stamp): the take commits
  -- tokens and timestamp together, atomically with the read above.
  redis.call('HSET', keys[1], args[1], struct.pack(FORMAT, TAG, left, slo, shi))
  return struct.pack('<d', left)
end

-- admit: ARGV as take's. Replies as take does when it took cost; for a
-- refusal, the array {'refused', bucket}: the stored bucket, as state
-- replies it, that the refusal was decided on (a refusal needs a present
-- bucket: an absent one is full, and a valid cost never exceeds capacity).
-- Go computes the refusal's wait from it, as retry_after does, so a refused
-- take answers its wait in one call.
local function admit(keys, args)
  local left = take(keys, args)
  if left then
    return left
  end
  return {'refused', redis.call('HGET', keys[1], args[1])}
end

-- peek: ARGV key, numbers: capacity and refill_per_second (float64) and
-- now_ms (int64), packed in 24 bytes ('<ddI4I4'). Replies the tokens the
-- bucket holds at now_ms (T6), 8 bytes ('<d'); writes nothing.
local function peek(keys, args)
  nargs(keys, args, 2)
  local x = numbers(args[2], 24, {'capacity', 'refill_per_second'})
  local cap, rate, nlo, nhi = x[1], x[2], x[3], x[4]
  local v = redis.call('HGET', keys[1], args[1])
  if not v then
    return struct.pack('<d', cap)
  end
  local tokens, llo, lhi, lv = bucket(v)
  return struct.pack('<d', accrue(tokens, elapsed(llo, lhi, lv, nlo, nhi, number(nlo, nhi)), rate, cap))
end

-- state: ARGV key. Replies the stored bucket, in this version's format or
-- version 3's, or nil for an absent one; writes nothing. retry_after
-- computes its answer from it in Go (T7's search needs int64 clock
-- arithmetic).
local function state(keys, args)
  nargs(keys, args, 1)
  local v = redis.call('HGET', keys[1], args[1])
  if v then
    bucket(v)
  end
  return v
end

-- reset: ARGV key. present -> absent (T10): the bucket's field goes; the
-- floor stays.
local function reset(keys, args)
  nargs(keys, args, 1)
  return redis.call('HDEL', keys[1], args[1])
end

-- reset_all: no ARGV. Every bucket and the floor go: a new table (T10).
local function reset_all(keys, args)
  nargs(keys, args, 0)
  return redis.call('DEL', keys[1], keys[2])
end

-- reclaim: ARGV numbers: capacity and refill_per_second (float64) and
-- now_ms (int64), packed in 24 bytes ('<ddI4I4'). Raises the floor to
-- now_ms and forgets every present bucket whose timestamp is not after
-- now_ms and that is full at now_ms by these limits (T12). Replies the
-- number forgotten.
local function reclaim(keys, args)
  nargs(keys, args, 1)
  local x = numbers(args[1], 24, {'capacity', 'refill_per_second'})
  local cap, rate, nlo, nhi = x[1], x[2], x[3], x[4]
  local nv = number(nlo, nhi)
  local flo, fhi, fv = floor_of(keys[2])
  local all = redis.call('HGETALL', keys[1])
  local gone = {}
  for i = 1, #all, 2 do
    local tokens, llo, lhi, lv = bucket(all[i + 1])
    if not after(llo, lhi, lv, nlo, nhi, nv) and
        accrue(tokens, elapsed(llo, lhi, lv, nlo, nhi, nv), rate, cap) == cap then
      gone[#gone + 1] = all[i]
    end
  end
  -- Every check is done; now the writes. The floor first rises to now_ms
  -- (never falls), then present -> absent for each forgettable bucket.
  if not flo or after(nlo, nhi, nv, flo, fhi, fv) then
    redis.call('SET', keys[2], struct.pack(FLOOR, TAG, nlo, nhi))
  end
  for i = 1, #gone, 1000 do
    redis.call('HDEL', keys[1], unpack(gone, i, math.min(i + 999, #gone)))
  end
  return #gone
end

redis.register_function{function_name = 'tollgate_tb_take_v4', callback = take}
redis.register_function{function_name = 'tollgate_tb_admit_v4', callback = admit}
redis.register_function{function_name = 'tollgate_tb_peek_v4', callback = peek, flags = {'no-writes'}}
redis.register_function{function_name = 'tollgate_tb_state_v4', callback = state, flags = {'no-writes'}}
redis.register_function{function_name = 'tollgate_tb_reset_v4', callback = reset}
redis.register_function{function_name = 'tollgate_tb_reset_all_v4', callback = reset_all}
redis.register_function{function_name = 'tollgate_tb_reclaim_v4', callback = reclaim}
