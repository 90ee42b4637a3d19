-- One round trip of the live state (gateway/state/redis_state.py): apply a list of operations
-- atomically, then return what changed since the caller last looked.
--
-- ARGV[1] is JSON: {"since": n, "epoch": "...", "now": t, "ops": [[kind, ...], ...]}. The live
-- figures are the board's cells (gateway/board.py), one hash field each, "a b text" with a and
-- b written exactly (%.17g); `changed` scores every cell by the sequence number of its last
-- write, so a worker asks only for what moved since its last reply. rpm windows are sorted sets
-- of call tokens scored by their start: `ring:` for calls that ended (or never hold a slot),
-- `open:` for calls in flight.
--
-- Reply: {seq, epoch, results, {name, value, ...}}; results hold one array per op, or the
-- single word `empty` when Redis holds no state yet (nothing was applied: seed it first).
-- A `check` that fails or a `take` marked required that is refused skips the ops after it.

local P = 'bench:'
local CELLS, CHANGED, SEQ, EPOCH = P .. 'cells', P .. 'changed', P .. 'seq', P .. 'epoch'
local WINDOW = 60
local request = cjson.decode(ARGV[1])
local now = request.now
local seq = nil
local forced = {}

local function fmt(x)
  return string.format('%.17g', x)
end

local function read(name)
  local value = redis.call('HGET', CELLS, name)
  if not value then
    return 0, 0, ''
  end
  local a, b, text = string.match(value, '^(%S+) (%S+) (.*)$')
  return tonumber(a), tonumber(b), text
end

local function touch(name)
  if not seq then
    seq = redis.call('INCR', SEQ)
  end
  redis.call('ZADD', CHANGED, seq, name)
end

local function write(name, a, b, text)
  redis.call('HSET', CELLS, name, fmt(a) .. ' ' .. fmt(b) .. ' ' .. (text or ''))
  touch(name)
end

local function add(name, da, db)
  local a, b, text = read(name)
  write(name, a + da, b + db, text)
end

local ops = {}

function ops.seed(op) -- {seed, epoch, [[name, value], ...]}: only into an empty Redis
  if redis.call('EXISTS', EPOCH) == 1 then
    return {'kept'}
  end
  for _, cell in ipairs(op[3]) do
    redis.call('HSET', CELLS, cell[1], cell[2])
    touch(cell[1])
  end
  redis.call('SET', EPOCH, op[2])
  return {'seeded'}
end

function ops.set(op) -- {set, cell, a, b, text}
  write(op[2], op[3], op[4], op[5])
  return {}
end

function ops.add(op) -- {add, cell, da, db}
  add(op[2], op[3], op[4])
  return {}
end

function ops.lower(op) -- {lower, cell, value}: a learned context window only goes down
  local known = read(op[2])
  if known ~= 0 and known <= op[3] then
    touch(op[2])
  else
    write(op[2], op[3], 0, '')
  end
  return {}
end

function ops.cool(op) -- {cool, [[cool cell, source cell, until, why, source], ...]}
  for _, e in ipairs(op[2]) do
    if read(e[1]) < e[3] then
      write(e[1], e[3], 0, e[4])
      write(e[2], 0, 0, e[5])
    else
      touch(e[1])
      touch(e[2])
    end
  end
  return {}
end

function ops.seated(op) -- {seated, latest cell, [seated cell, ...], now}: strictly increasing
  local latest = read(op[2])
  for _, cell in ipairs(op[3]) do
    local at = math.max(op[4], latest + 1e-6)
    latest = at
    local count = read(cell)
    write(cell, count + 1, at, '')
  end
  write(op[2], latest, 0, '')
  return {}
end

function ops.verdict(op) -- {verdict, shape cell, all cell, recent cell, du, dj, useful, replaced, decay}
  add(op[2], op[5], op[6])
  add(op[3], op[5], op[6])
  local useful, judged = read(op[4])
  if op[8] then
    write(op[4], math.min(math.max(useful + op[5], 0), judged), judged, '')
  else
    write(op[4], useful * op[9] + (op[7] and 1 or 0), judged * op[9] + 1, '')
  end
  return {}
end

function ops.check(op) -- {check, [[seated cell, last seated expected], ...]}
  local ok = true
  for _, e in ipairs(op[2]) do
    forced[#forced + 1] = e[1]
    local _, last = read(e[1])
    if last ~= e[2] then
      ok = false
    end
  end
  if ok then
    return {'ok'}
  end
  return {'conflict'}
end

local function trim(name, stale)
  local ring, open = P .. 'ring:' .. name, P .. 'open:' .. name
  redis.call('ZREMRANGEBYSCORE', ring, '-inf', fmt(now - WINDOW))
  redis.call('ZREMRANGEBYSCORE', open, '-inf', fmt(now - stale))
  return ring, open
end

local function oldest(ring, open)
  local first = nil
  for _, key in ipairs({ring, open}) do
    local top = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if top[2] and (not first or tonumber(top[2]) < first) then
      first = tonumber(top[2])
    end
  end
  return first
end

-- {take, [[ring, cap], ...], token, in flight, cool cell or false, [[day cell, cap], ...],
--  today, [day cell to count, ...], required, stale_s}
function ops.take(op)
  if op[5] then
    forced[#forced + 1] = op[5]
    local until_, _, why = read(op[5])
    local spent = 0
    for i, e in ipairs(op[6]) do
      local count, day = read(e[1])
      if day == op[7] and count >= e[2] then
        spent = i
        break
      end
    end
    if until_ > now or spent > 0 then
      return {'cooling', fmt(until_), why, tostring(spent)}
    end
  end
  for _, e in ipairs(op[2]) do
    local ring, open = trim(e[1], op[10])
    if redis.call('ZCARD', ring) + redis.call('ZCARD', open) >= e[2] then
      local first = oldest(ring, open)
      return {'full', e[1], first and fmt(first) or ''}
    end
  end
  for _, e in ipairs(op[2]) do
    local key = P .. (op[4] and 'open:' or 'ring:') .. e[1]
    redis.call('ZADD', key, now, op[3])
    redis.call('EXPIRE', key, math.ceil(WINDOW + op[10]))
  end
  for _, cell in ipairs(op[8]) do
    local count, day = read(cell)
    if day ~= op[7] then
      count = 0
    end
    write(cell, count + 1, op[7], '')
  end
  return {'ok'}
end

function ops.release(op) -- {release, [[ring, token], ...]}: the call ended, its slot ages out
  for _, e in ipairs(op[2]) do
    local open = P .. 'open:' .. e[1]
    local started = redis.call('ZSCORE', open, e[2])
    if started then
      redis.call('ZREM', open, e[2])
      if tonumber(started) > now - WINDOW then
        redis.call('ZADD', P .. 'ring:' .. e[1], started, e[2])
      end
    end
  end
  return {}
end

function ops.forget(op) -- {forget, [[ring, token], ...]}: as if never taken
  for _, e in ipairs(op[2]) do
    redis.call('ZREM', P .. 'ring:' .. e[1], e[2])
    redis.call('ZREM', P .. 'open:' .. e[1], e[2])
  end
  return {}
end

function ops.use(op) -- {use, [ring, ...], stale_s}: calls counted against each ring now
  local counts = {}
  for _, name in ipairs(op[2]) do
    local ring, open = trim(name, op[3])
    counts[#counts + 1] = tostring(redis.call('ZCARD', ring) + redis.call('ZCARD', open))
  end
  return counts
end

function ops.converse(op) -- {converse, cell, digest, idle_s, new id}: a route conversation's turn
  local index, last, text = read(op[2])
  local digest, id, turn = string.match(text, '^(%S+) (%S+) (%S+)$')
  if digest == op[3] and now - last < op[4] then
    turn = tonumber(turn) + 1
    write(op[2], index, now, digest .. ' ' .. id .. ' ' .. turn)
    return {'held', id, tostring(turn), fmt(index)}
  end
  write(op[2], 0, now, op[3] .. ' ' .. op[5] .. ' 1')
  return {'new', op[5], '1', '0'}
end

function ops.settle(op) -- {settle, cell, digest, member index}
  local _, _, text = read(op[2])
  if string.match(text, '^(%S+)') == op[3] then
    write(op[2], op[4], now, text)
  end
  return {}
end

local results = {}
if redis.call('EXISTS', EPOCH) == 0 and not (request.ops[1] and request.ops[1][1] == 'seed') then
  return {'0', '', 'empty', {}}
end
local skipping = false
for _, op in ipairs(request.ops) do
  if skipping then
    results[#results + 1] = {'skipped'}
  else
    local result = ops[op[1]](op)
    results[#results + 1] = result
    if result[1] == 'conflict' or (op[1] == 'take' and op[9] and result[1] ~= 'ok') then
      skipping = true
    end
  end
end

local epoch = redis.call('GET', EPOCH) or ''
local top = tonumber(redis.call('GET', SEQ) or '0')
local since = request.since
if epoch ~= request.epoch or since > top then
  since = -1
end
local names = redis.call('ZRANGEBYSCORE', CHANGED, '(' .. since, '+inf')
for _, name in ipairs(forced) do
  names[#names + 1] = name
end
local cells = {}
for first = 1, #names, 500 do
  local batch = {}
  for i = first, math.min(first + 499, #names) do
    batch[#batch + 1] = names[i]
  end
  local values = redis.call('HMGET', CELLS, unpack(batch))
  for i, name in ipairs(batch) do
    if values[i] then
      cells[#cells + 1] = name
      cells[#cells + 1] = values[i]
    end
  end
end
return {tostring(top), epoch, results, cells}
