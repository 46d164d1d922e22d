-- Cerberus idempotency release: KEYS record; ARGV token. 1 if the token owned an IN_PROGRESS record, now deleted (waiting duplicates told on KEYS[1]:c).
local r = redis.call('HMGET', KEYS[1], 't', 's')
if r[1] == ARGV[1] and r[2] == '0' then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[1] .. ':c', '')
  return 1
end
return 0
