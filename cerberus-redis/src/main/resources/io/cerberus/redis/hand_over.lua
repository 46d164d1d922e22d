-- Cerberus hand-over: KEYS owner, tokens, readers, reader-info, queue, queue-deadlines
-- ARGV holder token, next token, next lease ms, next holder.
-- Releases the holder's exclusive hold and, in the same step, grants the lock to the next attempt
-- of the same client, with a new fence, as an exclusive acquire would. Returns {2, fence} when
-- handed over, {0} when the holder no longer held, {-1} when it did nothing because others queue
-- in the store or readers hold (the caller releases as usual then).
local owner, tokens, readers, queue = KEYS[1], KEYS[2], KEYS[3], KEYS[5]
local token, next_token, lease, holder = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]

if redis.call('HGET', owner, 'token') ~= token then
  return {0}
end
if redis.call('EXISTS', queue) == 1 or redis.call('EXISTS', readers) == 1 then
  return {-1}
end
-- the owner hash stays (a waiter of another client told it was busy is still to be woken)
return {2, tonumber(take_exclusive(owner, tokens, next_token, 'exclusive', holder, lease))}
