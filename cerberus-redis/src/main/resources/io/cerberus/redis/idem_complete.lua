-- Cerberus idempotency complete: KEYS record; ARGV token, result, failure (0|1), retention ms ('' = for ever).
-- 1 if the token owned an IN_PROGRESS record, now COMPLETED (waiting duplicates told on KEYS[1]:c), or if the
-- token's record is completed already (this completion, sent again); 0 and nothing written otherwise.
local r = redis.call('HMGET', KEYS[1], 't', 's')
if r[1] ~= ARGV[1] then
  return 0
end
if r[2] == '1' then
  return 1
end
redis.call('HSET', KEYS[1], 's', '1', 'r', ARGV[2], 'x', ARGV[3])
if ARGV[4] == '' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
redis.call('PUBLISH', KEYS[1] .. ':c', '')
return 1
