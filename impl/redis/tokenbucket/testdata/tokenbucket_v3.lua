#!lua name=tollgate_tb
-- tollgate library version 3
-- (Raise it with every change to this file: rconn.Load refuses to replace a
-- newer version, and to load another text under the same version. Every
-- function is registered with the version's suffix, "_v3": a process of
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
--   KEYS[1]  tollgate:tb:{<table>}        hash: bucket key -> "<tokens> <last_ms>"
--   KEYS[2]  tollgate:tb:{<table>}:floor  string: the floor, "<ms>" (T12)
--
-- A field holds one present bucket (an absent one has no field): the tokens
-- left after the last committed take, as the shortest decimal that reads
-- back as the same binary64 (fmt below), a space, and the newest clock any
-- committed take carried (T4) as a decimal int64. The floor key exists once
-- a reclaim has run since the table was last reset whole.
--
-- Arguments and replies cross the wire as strings only. Floats never go
-- through tostring (Lua's %.14g loses bits) nor as a Lua number reply (Redis
-- truncates it to an integer); clocks are int64 decimals that Lua's
-- binary64 numbers cannot hold above 2^53, so they are compared and
-- subtracted digit-exactly (limbs below) and stored as the strings they
-- came as. The refill formula is model/tokenbucket.go's Refill, rounded
-- step for step in the same order (T3).
--
-- Every function checks every argument and every stored value it will use
-- before its first write, and answers a refusal with an error reply and no
-- write: Redis does not roll back the writes of a script that fails.

local TWO32 = 4294967296
local TWO31 = 2147483648
local MAXF = 1.7976931348623157e308 -- math.MaxFloat64
local MAXI = '9223372036854775807'
local MINI = '9223372036854775808' -- the magnitude of math.MinInt64

-- isint reports whether s is a decimal int64 as Go's strconv.FormatInt
-- writes one: an optional '-', no leading zero, within the int64 range.
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

-- A clock is passed around as its decimal string s and v, its value as a
-- number when s has at most 15 characters (then v is exact, and so is the
-- difference of two such values: less than 2^53), otherwise false.
local function value(s)
  return #s <= 15 and tonumber(s)
end

-- limbs returns the int64 decimal s plus 2^63 (so in [0, 2^64)) as two
-- 32-bit halves, hi and lo, each exact in a binary64.
local function limbs(s)
  local neg = string.byte(s, 1) == 45 -- '-'
  local hi, lo = 0, 0
  for i = neg and 2 or 1, #s do
    lo = lo * 10 + (string.byte(s, i) - 48)
    local carry = math.floor(lo / TWO32)
    lo = lo - carry * TWO32
    hi = hi * 10 + carry
  end
  if not neg then
    return hi + TWO31, lo
  elseif lo > 0 then
    return TWO31 - hi - 1, TWO32 - lo
  end
  return TWO31 - hi, 0
end

-- after reports whether the clock (as, av) is later than (bs, bv).
local function after(as, av, bs, bv)
  if av and bv then
    return av > bv
  end
  local ah, al = limbs(as)
  local bh, bl = limbs(bs)
  return ah > bh or (ah == bh and al > bl)
end

-- elapsed is float64(ElapsedMs(last, now)) of model/tokenbucket.go:
-- max(now - last, 0), exact as an unsigned 64-bit count, then rounded once
-- to binary64. Two exact halves summed by one addition round exactly as
-- Go's conversion of the uint64 does.
local function elapsed(ls, lv, ns, nv)
  if lv and nv then
    local d = nv - lv -- exact
    if d > 0 then return d end
    return 0
  end
  local nh, nl = limbs(ns)
  local lh, ll = limbs(ls)
  if not (nh > lh or (nh == lh and nl > ll)) then
    return 0
  end
  local dh, dl = nh - lh, nl - ll
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

-- refill is Refill of model/tokenbucket.go for a present bucket last
-- stamped ls (lv) at now ns (nv): accrue over elapsed.
local function refill(tokens, ls, lv, cap, rate, ns, nv)
  return accrue(tokens, elapsed(ls, lv, ns, nv), rate, cap)
end

-- fmt is x as the shortest of %.15g, %.16g and %.17g that reads back as x
-- (%.17g always does), so a float crosses the wire bit for bit (T3). A
-- whole number below 10^15 in magnitude needs no check: %.15g is exact.
local function fmt(x)
  local s = string.format('%.15g', x)
  if x == math.floor(x) and x < 1e15 and x > -1e15 then
    return s
  end
  if tonumber(s) ~= x then
    s = string.format('%.16g', x)
    if tonumber(s) ~= x then
      s = string.format('%.17g', x)
    end
  end
  return s
end

-- positive parses a float argument that must be finite and > 0 (T9).
local function positive(s, field)
  local x = tonumber(s)
  if not (x and x > 0 and x <= MAXF) then
    error({err = 'ERR tollgate_tb: ' .. field .. ' must be finite and greater than zero'})
  end
  return x
end

-- clock parses a clock argument: its string and value (see value).
local function clock(s)
  if not isint(s) then
    error({err = 'ERR tollgate_tb: now_ms must be a decimal int64'})
  end
  return s, value(s)
end

-- bucket parses a stored field value into tokens and last_ms (string and
-- value).
local function bucket(v)
  local sep = string.find(v, ' ', 1, true)
  local tokens = sep and tonumber(string.sub(v, 1, sep - 1))
  local last = sep and string.sub(v, sep + 1)
  if not (tokens and tokens >= 0 and tokens <= MAXF and isint(last)) then
    error({err = 'ERR tollgate_tb: a stored bucket is not "<tokens> <last_ms>"'})
  end
  return tokens, last, value(last)
end

-- floor_of reads the floor: its string and value, or false.
local function floor_of(key)
  local f = redis.call('GET', key)
  if not f then
    return false, false
  end
  if not isint(f) then
    error({err = 'ERR tollgate_tb: the stored floor is not a decimal int64'})
  end
  return f, value(f)
end

local function nargs(keys, args, n)
  if #keys ~= 2 or #args ~= n then
    error({err = 'ERR tollgate_tb: wrong number of keys or arguments'})
  end
end

-- take: ARGV key, capacity, refill_per_second, cost, now_ms. Replies the
-- tokens remaining when it took cost (T1), and nil when the bucket did not
-- cover it (T2: no write). (A bare string, not an array: building a table
-- for the reply costs the server more than the rest of a refusal.)
--
-- The common case is written out in line, as every call of a Lua function
-- costs the server a fraction of a microsecond: valid arguments, and clocks
-- of at most 15 characters, whose values and difference are exact numbers;
-- only the refill formula is a call (accrue), so that it is stated once.
-- Anything else goes through the helpers above, which raise the errors.
local function take(keys, args)
  if #keys ~= 2 or #args ~= 5 then
    nargs(keys, args, 5)
  end
  local key, ns = args[1], args[5]
  local cap, rate, cost = tonumber(args[2]), tonumber(args[3]), tonumber(args[4])
  if not (cap and cap > 0 and cap <= MAXF) then positive(args[2], 'capacity') end
  if not (rate and rate > 0 and rate <= MAXF) then positive(args[3], 'refill_per_second') end
  if not (cost and cost > 0 and cost <= MAXF) then positive(args[4], 'cost') end
  if not isint(ns) then clock(ns) end
  local nv = value(ns)
  if cost > cap then
    error({err = 'ERR tollgate_tb: cost must not exceed capacity'})
  end
  local have, stamp
  local v = redis.call('HGET', keys[1], key)
  if v then
    local tokens, ls, lv = bucket(v)
    if lv and nv then
      -- refill and T4 on exact numbers: elapsed = max(now - last, 0).
      local d = nv - lv
      if d > 0 then
        stamp = ns
      else
        d = 0
        stamp = ls -- T4: the stored timestamp never moves back
      end
      have = accrue(tokens, d, rate, cap)
    else
      have = refill(tokens, ls, lv, cap, rate, ns, nv)
      stamp = after(ls, lv, ns, nv) and ls or ns -- T4
    end
  else
    have = cap -- an absent bucket is full
    local fs, fv = floor_of(keys[2])
    -- T12: nor behind the floor.
    stamp = fs and after(fs, fv, ns, nv) and fs or ns
  end
  if have < cost then
    return false
  end
  local left = fmt(have - cost)
  -- absent or present -> present(have - cost, stamp): the take commits
  -- tokens and timestamp together, atomically with the read above.
  redis.call('HSET', keys[1], key, left .. ' ' .. stamp)
  return left
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

-- peek: ARGV key, capacity, refill_per_second, now_ms. Replies the tokens
-- the bucket holds at now_ms (T6); writes nothing.
local function peek(keys, args)
  nargs(keys, args, 4)
  local cap = positive(args[2], 'capacity')
  local rate = positive(args[3], 'refill_per_second')
  local ns, nv = clock(args[4])
  local v = redis.call('HGET', keys[1], args[1])
  if not v then
    return fmt(cap)
  end
  local tokens, ls, lv = bucket(v)
  return fmt(refill(tokens, ls, lv, cap, rate, ns, nv))
end

-- state: ARGV key. Replies the stored bucket, "<tokens> <last_ms>", or nil
-- for an absent one; writes nothing. retry_after computes its answer from
-- it in Go (T7's search needs int64 clock arithmetic).
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

-- reclaim: ARGV capacity, refill_per_second, now_ms. Raises the floor to
-- now_ms and forgets every present bucket whose timestamp is not after
-- now_ms and that is full at now_ms by these limits (T12). Replies the
-- number forgotten.
local function reclaim(keys, args)
  nargs(keys, args, 3)
  local cap = positive(args[1], 'capacity')
  local rate = positive(args[2], 'refill_per_second')
  local ns, nv = clock(args[3])
  local fs, fv = floor_of(keys[2])
  local all = redis.call('HGETALL', keys[1])
  local gone = {}
  for i = 1, #all, 2 do
    local tokens, ls, lv = bucket(all[i + 1])
    if not after(ls, lv, ns, nv) and refill(tokens, ls, lv, cap, rate, ns, nv) == cap then
      gone[#gone + 1] = all[i]
    end
  end
  -- Every check is done; now the writes. The floor first rises to now_ms
  -- (never falls), then present -> absent for each forgettable bucket.
  if not fs or after(ns, nv, fs, fv) then
    redis.call('SET', keys[2], ns)
  end
  for i = 1, #gone, 1000 do
    redis.call('HDEL', keys[1], unpack(gone, i, math.min(i + 999, #gone)))
  end
  return #gone
end

redis.register_function{function_name = 'tollgate_tb_take_v3', callback = take}
redis.register_function{function_name = 'tollgate_tb_admit_v3', callback = admit}
redis.register_function{function_name = 'tollgate_tb_peek_v3', callback = peek, flags = {'no-writes'}}
redis.register_function{function_name = 'tollgate_tb_state_v3', callback = state, flags = {'no-writes'}}
redis.register_function{function_name = 'tollgate_tb_reset_v3', callback = reset}
redis.register_function{function_name = 'tollgate_tb_reset_all_v3', callback = reset_all}
redis.register_function{function_name = 'tollgate_tb_reclaim_v3', callback = reclaim}
