-- Cerberus idempotency release: KEYS record; ARGV token. 1 if the token owned an IN_PROGRESS record, now deleted (waiting duplicates told on KEYS[1]:c).
if redis.call('HGET', KEYS[1], 't') == ARGV[1] and redis.call('HGET', KEYS[1], 's') == '0' then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[1] .. ':c', '')
  return 1
end
return 0
