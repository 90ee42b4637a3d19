-- Route mode's conversations in Redis (gateway/state/conversations.py: the table, its sets and
-- who a new conversation evicts). Loaded before gateway/state/live.lua, in the same script:
-- `route_ops` adds its two operations to live.lua's, with live.lua's cell helpers.

local function route_ops(ops, read, write, fmt, now)
  -- A route turn's cell in its set (gateway/state/conversations.py, `place`, the same rule): the
  -- one holding the conversation; else a free one (empty, or idle); else the oldest of the key
  -- that holds the most of the set, the turn's own key's when it holds as many as any other.
  local function place(cells, owner, digest, idle, fresh)
    local live, counts, free = {}, {}, nil
    for way, cell in ipairs(cells) do
      local _, last, text = read(cell)
      local holder, held = string.match(text, '^(%S+) (%S+) %S+ %S+$')
      local alive = holder ~= nil and now - last < idle
      if holder and held == digest then
        return way, alive and not fresh
      end
      if alive then
        live[#live + 1] = {way, holder, last}
        counts[holder] = (counts[holder] or 0) + 1
      elseif not free then
        free = way
      end
    end
    if free then
      return free, false
    end
    local mine, most = counts[owner] or 0, 0
    for holder, n in pairs(counts) do
      if holder ~= owner and n > most then
        most = n
      end
    end
    local victim = nil
    for _, c in ipairs(live) do
      local evictable
      if mine >= most then
        evictable = c[2] == owner
      else
        evictable = c[2] ~= owner and counts[c[2]] == most
      end
      if evictable and (not victim or c[3] < victim[3]) then
        victim = c
      end
    end
    return victim[1], false
  end

  function ops.converse(op) -- {converse, [cell, ...], owner, digest, idle_s, new id, fresh}
    local cells, owner, digest = op[2], op[3], op[4]
    local way, held = place(cells, owner, digest, op[5], op[7] == true)
    local cell = cells[way]
    if held then
      local index, _, text = read(cell)
      local id, turn = string.match(text, '^%S+ %S+ (%S+) (%S+)$')
      turn = tonumber(turn) + 1
      write(cell, index, now, owner .. ' ' .. digest .. ' ' .. id .. ' ' .. turn)
      return {'held', id, tostring(turn), fmt(index)}
    end
    write(cell, 0, now, owner .. ' ' .. digest .. ' ' .. op[6] .. ' 1')
    return {'new', op[6], '1', '0'}
  end

  function ops.settle(op) -- {settle, [cell, ...], digest, member index}
    for _, cell in ipairs(op[2]) do
      local _, _, text = read(cell)
      if string.match(text, '^%S+ (%S+)') == op[3] then
        write(cell, op[4], now, text)
        return {}
      end
    end
    return {}
  end
end
