-- Cerberus idempotency renew: KEYS record; ARGV token, lease ms. 1 if the token owns an IN_PROGRESS record.
if redis.call('HGET', KEYS[1], 't') == ARGV[1] and redis.call('HGET', KEYS[1], 's') == '0' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
