-- Cerberus acquire: KEYS owner, tokens, readers, reader-info, queue, queue-deadlines
-- ARGV token, mode (exclusive|fair|write|read), lease ms, holder, stale-waiter ms, retry cap ms
-- Returns {1, fence} when granted (again, with the same fence, if the token already holds), or
-- {0, ms} when busy: the longest to wait before trying again.
local owner, tokens, readers, info, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local token, mode, lease, holder = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local stale_ms, retry_cap = tonumber(ARGV[5]), tonumber(ARGV[6])

-- fast path: an exclusive acquire of a name with no owner, no reader and no queue, in one lookup; the
-- same effects as the general path below, which takes everything else (a retry of a holder included)
if mode == 'exclusive' and redis.call('EXISTS', owner, readers, queue) == 0 then
  return {1, tonumber(take_exclusive(owner, tokens, token, mode, holder, lease))}
end

local now, now_us = server_time()
purge_readers(readers, info, now)
purge_queue(queue, deadlines, now)

if redis.call('HGET', owner, 'token') == token then
  return {1, tonumber(redis.call('HGET', owner, 'fence'))}
end
local mine = redis.call('HGET', info, token)
if mine then
  return {1, tonumber(string.match(mine, '^(%d+)'))}
end

local shared = mode == 'read'
local member = (shared and 'r' or 'w') .. token
local queued = mode ~= 'exclusive'
local wait = -1
local function blocked_for(ms)
  if wait < 0 or ms < wait then
    wait = ms
  end
end
local owner_ttl = redis.call('PTTL', owner)
if owner_ttl >= 0 then
  blocked_for(owner_ttl)
elseif owner_ttl == -1 then
  blocked_for(retry_cap)
end
if not shared then
  local first = redis.call('ZRANGE', readers, 0, 0, 'WITHSCORES')
  if first[2] then
    blocked_for(tonumber(first[2]) - now)
  end
end
local behind = false
if queued then
  if shared then
    for _, other in ipairs(redis.call('ZRANGE', queue, 0, -1)) do
      if other == member then
        break
      end
      if string.sub(other, 1, 1) ~= 'r' then
        behind = true
        break
      end
    end
  else
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    behind = head ~= nil and head ~= member
  end
end

if wait < 0 and not behind then
  redis.call('ZREM', queue, member)
  redis.call('ZREM', deadlines, member)
  local f = next_fence(tokens)
  if shared then
    redis.call('ZADD', readers, now + lease, token)
    redis.call('HSET', info, token, f .. ':' .. holder)
    expire_readers(readers, info, now)
  else
    redis.call('HSET', owner, 'token', token, 'fence', f, 'mode', mode, 'holder', holder)
    if redis.call('EXISTS', queue) == 1 then
      -- others queue for the name: the release of this hold is to tell them
      redis.call('HSET', owner, 'waited', '1')
    end
    redis.call('PEXPIRE', owner, lease)
  end
  return {1, tonumber(f)}
end

if queued then
  if not redis.call('ZSCORE', queue, member) then
    redis.call('ZADD', queue, tonumber(now_us), member)
  end
  redis.call('ZADD', deadlines, now + stale_ms, member)
  redis.call('PEXPIRE', queue, stale_ms)
  redis.call('PEXPIRE', deadlines, stale_ms)
end
if owner_ttl ~= -2 then
  -- someone waits for this hold: its release publishes (a release nobody waited for does not)
  redis.call('HSET', owner, 'waited', '1')
end
if wait < 0 or wait > retry_cap then
  wait = retry_cap
end
return {0, wait}
