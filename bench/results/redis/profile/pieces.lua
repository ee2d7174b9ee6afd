-- The pieces profile.sh times inside the server: redis.call of the
-- commands a take and redis_rate send, the conversions version 3 of the
-- library did (tonumber, %.17g formatting) and version 4 does (struct), the
-- whole take (version 4, on a bucket of its own format after the first
-- call), and the body of redis_rate's script (TIME, GET, SET EX).
local function clk()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1e6 + tonumber(t[2])
end
local K = {'tollgate:tb:{prof}', 'tollgate:tb:{prof}:floor'}
local A = {'k1', '1e+15', '1e+09', '1', '1764900000000'}
local pieces = {}
pieces.empty = function() end
pieces.hget = function() return redis.call('HGET', K[1], 'k1') end
pieces.hset = function() return redis.call('HSET', K[1], 'k1', '999999999999999 1764900000000') end
pieces.time = function() return redis.call('TIME') end
pieces.get = function() return redis.call('GET', 'rate:k1') end
pieces.setex = function() return redis.call('SET', 'rate:kx', 123.456, 'EX', 3) end
pieces.tonum13 = function() return tonumber(A[5]) end
-- a bucket stored by version 3 (the migration path) and by version 4
pieces.oldbucket = function() return bucket('999999999.12345678 1764900000000') end
local stored
pieces.bucket = function()
  stored = stored or struct.pack('<BdI4I4', 4, 999999999.12345678, 1764900000000 % 4294967296, math.floor(1764900000000 / 4294967296))
  return bucket(stored)
end
-- version 3's float formatting: %.15g, and %.17g with its round-trip check
pieces.fmt15 = function() return string.format('%.15g', 999999999999998) end
pieces.fmt17 = function() return string.format('%.17g', 999999999.12345678) end
pieces.tonumfrac = function() return tonumber('999999999.12345678') end
pieces.pack = function() return struct.pack('<d', 999999999.12345678) end
local packed
pieces.unpack = function() packed = packed or struct.pack("<d", 999999999.12345678) return struct.unpack('<d', packed) end
pieces.concat = function() return '999999999999999' .. ' ' .. '1764900000000' end
local A4
pieces.take = function() A4 = A4 or {'k1', struct.pack('<dddI4I4', 1e15, 1e9, 1, 1764900000000 % 4294967296, math.floor(1764900000000 / 4294967296))} return take(K, A4) end
pieces.rr = function()
  local burst, rate, period, cost = '1000000000', '1000000000', '1', tonumber('1')
  local emission_interval = period / rate
  local increment = emission_interval * cost
  local burst_offset = emission_interval * burst
  local now = redis.call("TIME")
  now = (now[1] - 1483228800) + (now[2] / 1000000)
  local tat = redis.call("GET", 'rate:k1')
  if not tat then tat = now else tat = tonumber(tat) end
  tat = math.max(tat, now)
  local new_tat = tat + increment
  local allow_at = new_tat - burst_offset
  local diff = now - allow_at
  local remaining = diff / emission_interval
  local reset_after = new_tat - now
  if reset_after > 0 then redis.call("SET", 'rate:k1', new_tat, "EX", math.ceil(reset_after)) end
  return {cost, remaining, tostring(-1), tostring(reset_after)}
end
-- tbprof_run: ARGV piece, n. Replies the best of 20 batches of n calls of
-- the piece, in ns per call (the empty piece is the loop alone).
redis.register_function('tbprof_run', function(keys, args)
  local f, n = pieces[args[1]], tonumber(args[2])
  local best = 1e18
  for rep = 1, 20 do
    local t0 = clk()
    for i = 1, n do f() end
    local t1 = clk()
    if t1 - t0 < best then best = t1 - t0 end
  end
  return tostring(best * 1000 / n)
end)
