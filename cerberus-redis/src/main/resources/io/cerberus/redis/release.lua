-- Cerberus release (and abandon): KEYS owner, tokens, readers, reader-info, queue, queue-deadlines
-- ARGV token, mode, channel. Leaves the queue, releases the hold if the token still has it, and
-- publishes the waiters that may be granted now on the lock's channel. Returns 1 if it held.
local owner, readers, info, queue, deadlines = KEYS[1], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local token, mode, channel = ARGV[1], ARGV[2], ARGV[3]

-- fast path: an exclusive hold nobody was told is busy (and granted while nobody queued) has no one
-- to wake; exclusive attempts never queue, so one that does not hold has nothing to undo either
if mode == 'exclusive' then
  local held = redis.call('HMGET', owner, 'token', 'waited')
  if held[1] ~= token then
    return 0
  end
  if not held[2] then
    redis.call('DEL', owner)
    return 1
  end
  if redis.call('EXISTS', queue) == 0 then
    -- waiters, none queued: wake one exclusive waiter, as the general path below would
    redis.call('DEL', owner)
    redis.call('PUBLISH', channel, '')
    return 1
  end
end

local now = server_time()
purge_readers(readers, info, now)
purge_queue(queue, deadlines, now)
local member = (mode == 'read' and 'r' or 'w') .. token
local left = redis.call('ZREM', queue, member)
redis.call('ZREM', deadlines, member)
local released = 0
if mode == 'read' then
  if redis.call('ZREM', readers, token) == 1 then
    redis.call('HDEL', info, token)
    expire_readers(readers, info, now)
    released = 1
  end
elseif redis.call('HGET', owner, 'token') == token then
  redis.call('DEL', owner)
  released = 1
end
if released == 1 or left == 1 then
  redis.call('PUBLISH', channel, grantable_heads(owner, readers, queue))
end
return released
