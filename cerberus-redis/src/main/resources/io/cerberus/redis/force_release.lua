-- Cerberus force release: KEYS owner, tokens, readers, reader-info, queue, queue-deadlines
-- ARGV fencing token, channel. Frees the hold whose fence is the token, whoever holds it (the
-- exclusive owner, or the readers that got that fence), and publishes the waiters that may be granted
-- now, as a release does. A newer hold has a newer fence and is left alone. Returns 1 if it freed.
-- The old holder learns at its next renewal: the owner check no longer finds its token.
local owner, readers, info, queue, deadlines = KEYS[1], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local fence, channel = ARGV[1], ARGV[2]
local now = server_time()
purge_readers(readers, info, now)
purge_queue(queue, deadlines, now)
local freed = 0
if redis.call('HGET', owner, 'fence') == fence then
  redis.call('DEL', owner)
  freed = 1
end
local entries = redis.call('HGETALL', info)
local readers_freed = 0
for i = 1, #entries, 2 do
  if string.match(entries[i + 1], '^(%-?%d+):') == fence then
    redis.call('ZREM', readers, entries[i])
    redis.call('HDEL', info, entries[i])
    readers_freed = 1
  end
end
if readers_freed == 1 then
  expire_readers(readers, info, now)
  freed = 1
end
if freed == 1 then
  redis.call('PUBLISH', channel, grantable_heads(owner, readers, queue))
end
return freed
