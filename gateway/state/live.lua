-- One round trip of the live state (gateway/state/redis_state.py): apply a list of operations
-- atomically, then return what changed since the caller last looked.
--
-- ARGV[1] is JSON: {"since": n, "epoch": "...", "now": t, "origin": id, "ops": [[kind, ...],
-- ...]}, origin naming the worker that sent it. The live figures are the board's cells
-- (gateway/board.py), one hash field each, "a b text" with a and b written exactly (%.17g);
-- `changed` scores every cell by the sequence number of its last write, so a worker asks only
-- for what moved since its last reply. rpm windows are sorted sets of call tokens scored by
-- their start: `ring:` for calls that ended (or never hold a slot), `open:` for calls in flight.
--
-- Reply: {seq, epoch, results, {name, seq, value, ...}}; results hold one array per op, or the
-- single word `empty` when Redis holds no state yet (nothing was applied: seed it first).
-- A `take` marked required that is refused (a key over its rpm) skips the ops after it.
-- The cells a step wrote are also published on `changes` ({origin, epoch, seq, cells: [name,
-- value, ...]}), so every replica's mirror hears of a seating before its next panel is chosen;
-- unless the request says `"publish": false` (it only ended seats: the others' next replies
-- bring what it wrote, since every write is scored in `changed`).

local P = 'bench:'
local CELLS, CHANGED, SEQ, EPOCH = P .. 'cells', P .. 'changed', P .. 'seq', P .. 'epoch'
local CHANNEL = P .. 'changes'
local WINDOW = 60
local request = cjson.decode(ARGV[1])
local now = request.now
local seq = nil
local forced = {}
local dirty, written = {}, {}

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
  if not dirty[name] then
    dirty[name] = true
    written[#written + 1] = name
  end
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

function ops.count(op) -- {count, [day cell, ...], day}: a call counted while Redis was away
  for _, cell in ipairs(op[2]) do
    local count, day = read(cell)
    if day == op[3] then
      write(cell, count + 1, day, '')
    elseif day < op[3] then
      write(cell, 1, op[3], '')
    end
  end
  return {'ok'}
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

local function mark(latest_cell, cells, at_least) -- seat times strictly increasing
  local latest = read(latest_cell)
  for _, cell in ipairs(cells) do
    local at = math.max(at_least, latest + 1e-6)
    latest = at
    local count = read(cell)
    write(cell, count + 1, at, '')
  end
  write(latest_cell, latest, 0, '')
end

function ops.seated(op) -- {seated, latest cell, [seated cell, ...], now}
  mark(op[2], op[3], op[4])
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

local function trim(name, stale)
  local ring, open = P .. 'ring:' .. name, P .. 'open:' .. name
  for _, key in ipairs({ring, open}) do
    -- a start later than now: this clock was set back (or runs behind another replica's); the
    -- call counts from now, so a window lasts a minute, not until the clock catches up with it
    for _, token in ipairs(redis.call('ZRANGEBYSCORE', key, '(' .. fmt(now), '+inf')) do
      redis.call('ZADD', key, now, token)
    end
  end
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

-- A call's slots: spec = {[[ring, cap], ...], token, in flight, cool cell or false,
-- [[day cell, rpd cap], ...], today, [day cell to count, ...], stale_s}
local function take(spec)
  local rings, token, in_flight, cool, caps, today, counts, stale = unpack(spec)
  if cool then
    forced[#forced + 1] = cool
    local until_, _, why = read(cool)
    local spent = 0
    for i, e in ipairs(caps) do
      local count, day = read(e[1])
      if day == today and count >= e[2] then
        spent = i
        break
      end
    end
    if until_ > now or spent > 0 then
      return {'cooling', fmt(until_), why, tostring(spent)}
    end
  end
  for _, e in ipairs(rings) do
    local ring, open = trim(e[1], stale)
    if redis.call('ZCARD', ring) + redis.call('ZCARD', open) >= e[2] then
      local first = oldest(ring, open)
      return {'full', e[1], first and fmt(first) or ''}
    end
  end
  for _, e in ipairs(rings) do
    local key = P .. (in_flight and 'open:' or 'ring:') .. e[1]
    redis.call('ZADD', key, now, token)
    redis.call('EXPIRE', key, math.ceil(WINDOW + stale))
  end
  for _, cell in ipairs(counts) do
    local count, day = read(cell)
    if day ~= today then
      count = 0
    end
    write(cell, count + 1, today, '')
  end
  return {'ok'}
end

function ops.take(op) -- {take, spec, required}
  return take(op[2])
end

-- {seat, {latest = cell, fixed = [[seated cell, spec], ...], chairs = n,
--         candidates = [[alias, seated cell, last seated expected, family, spec], ...]}}
-- A panel's seats: the fixed ones as chosen; the explorer chairs to the first candidates (in
-- the order routing ranked them) that no replica has seated since this one's board heard,
-- one per family; only if too few are left, to the earliest of the others.
function ops.seat(op)
  local panel = op[2]
  local picked, families, late = {}, {}, {}
  for _, c in ipairs(panel.candidates) do
    forced[#forced + 1] = c[2]
    local _, last = read(c[2])
    if last ~= c[3] then
      late[#late + 1] = c
    elseif #picked < panel.chairs and not families[c[4]] then
      picked[#picked + 1] = c
      families[c[4]] = true
    end
  end
  for _, c in ipairs(late) do
    if #picked < panel.chairs and not families[c[4]] then
      picked[#picked + 1] = c
      families[c[4]] = true
    end
  end
  local cells, aliases, results = {}, {}, {}
  for _, seat in ipairs(panel.fixed) do
    cells[#cells + 1] = seat[1]
  end
  for _, c in ipairs(picked) do
    cells[#cells + 1] = c[2]
    aliases[#aliases + 1] = c[1]
  end
  mark(panel.latest, cells, now)
  for _, seat in ipairs(panel.fixed) do
    results[#results + 1] = take(seat[2])
  end
  for _, c in ipairs(picked) do
    results[#results + 1] = take(c[5])
  end
  return {aliases, results}
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

route_ops(ops, read, write, fmt, now) -- {converse, ...}, {settle, ...}: conversations.lua

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
    if op[1] == 'take' and op[3] and result[1] ~= 'ok' then
      skipping = true
    end
  end
end

local epoch = redis.call('GET', EPOCH) or ''
local top = tonumber(redis.call('GET', SEQ) or '0')

local function values(names)
  local found = {}
  for first = 1, #names, 500 do
    local batch = {}
    for i = first, math.min(first + 499, #names) do
      batch[#batch + 1] = names[i]
    end
    local got = redis.call('HMGET', CELLS, unpack(batch))
    for i = 1, #batch do
      found[first + i - 1] = got[i]
    end
  end
  return found
end

if #written > 0 and request.publish ~= false then
  local cells, got = {}, values(written)
  for i, name in ipairs(written) do
    if got[i] then
      cells[#cells + 1] = name
      cells[#cells + 1] = got[i]
    end
  end
  -- the sender's id first, so it skips its own news unread (its reply brought the same)
  local news = cjson.encode({epoch = epoch, seq = seq, cells = cells})
  if request.origin then
    news = '{"origin":' .. cjson.encode(request.origin) .. ',' .. string.sub(news, 2)
  end
  redis.call('PUBLISH', CHANNEL, news)
end

local since = request.since
if epoch ~= request.epoch or since > top then
  since = -1
end
local scored = redis.call('ZRANGEBYSCORE', CHANGED, '(' .. since, '+inf', 'WITHSCORES')
local names, seqs = {}, {}
for i = 1, #scored, 2 do
  names[#names + 1] = scored[i]
  seqs[#seqs + 1] = scored[i + 1]
end
for _, name in ipairs(forced) do
  names[#names + 1] = name
  seqs[#seqs + 1] = redis.call('ZSCORE', CHANGED, name) or '0'
end
local cells, got = {}, values(names)
for i, name in ipairs(names) do
  if got[i] then
    cells[#cells + 1] = name
    cells[#cells + 1] = seqs[i]
    cells[#cells + 1] = got[i]
  end
end
return {tostring(top), epoch, results, cells}
