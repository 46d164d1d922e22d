-- Cerberus: functions shared by every script (prepended to each one). Times are the server's clock.
-- A lock's keys (on one hash slot): owner (hash), tokens (the counter the namespace's locks share),
-- readers (zset token -> expiry ms), reader-info (hash token -> "fence:holder"), queue (zset member ->
-- arrival us), queue-deadlines (zset member -> deadline ms). Queue members are "r" or "w" followed by
-- the token.
if redis.replicate_commands then pcall(redis.replicate_commands) end

-- now in milliseconds (a number) and in microseconds (a string: exact, used to seed fence counters)
local function server_time()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), t[1] .. string.sub('000000' .. t[2], -6)
end

-- drop readers whose lease ran out
local function purge_readers(readers, info, now)
  local expired = redis.call('ZRANGEBYSCORE', readers, '-inf', now)
  for _, token in ipairs(expired) do
    redis.call('HDEL', info, token)
  end
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
  end
end

-- let the reader keys live as long as their longest-living reader
local function expire_readers(readers, info, now)
  local last = redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')
  if last[2] then
    local ttl = math.max(1, tonumber(last[2]) - now)
    redis.call('PEXPIRE', readers, ttl)
    redis.call('PEXPIRE', info, ttl)
  else
    redis.call('DEL', info)
  end
end

-- drop queued waiters that stopped retrying (dead or gone) so they do not block the queue
local function purge_queue(queue, deadlines, now)
  local stale = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
  for _, member in ipairs(stale) do
    redis.call('ZREM', queue, member)
  end
  if #stale > 0 then
    redis.call('ZREMRANGEBYSCORE', deadlines, '-inf', now)
  end
end

-- the queue members that could be granted now, space-separated: none while an exclusive hold
-- exists; else the head if it is exclusive and no reader holds, or the run of readers at the head
local function grantable_heads(owner, readers, queue)
  if redis.call('EXISTS', owner) == 1 then
    return ''
  end
  local heads = {}
  for i, member in ipairs(redis.call('ZRANGE', queue, 0, 63)) do
    if string.sub(member, 1, 1) ~= 'r' then
      if i == 1 and redis.call('ZCARD', readers) == 0 then
        heads[1] = member
      end
      break
    end
    heads[#heads + 1] = member
  end
  return table.concat(heads, ' ')
end

-- the next fencing token, a string: from the counter the namespace's locks share (a lost counter
-- restarts at the server's clock in microseconds, so tokens keep growing)
local function next_fence(tokens)
  local f = redis.call('INCR', tokens)
  if f == 1 then
    local _, us = server_time()
    redis.call('SET', tokens, us)
    return us
  end
  return string.format('%.0f', f)
end

-- make token the exclusive owner with the next fence; returns the fence, a string
local function take_exclusive(owner, tokens, token, mode, holder, lease)
  local f = next_fence(tokens)
  redis.call('HSET', owner, 'token', token, 'fence', f, 'mode', mode, 'holder', holder)
  redis.call('PEXPIRE', owner, lease)
  return f
end
