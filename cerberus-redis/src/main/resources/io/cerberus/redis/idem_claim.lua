-- Cerberus idempotency claim: KEYS record; ARGV token, fingerprint, lease ms.
-- Returns {} when the caller now owns the key (an IN_PROGRESS record, created with its expiry in this one
-- script, so it can never outlive its lease; or its own, the claim sent again), else the record:
-- {state, token, fingerprint, result, failure}.
local r = redis.call('HMGET', KEYS[1], 's', 't', 'f', 'r', 'x')
if r[1] then
  if r[1] == '0' and r[2] == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return {}
  end
  return r
end
redis.call('HSET', KEYS[1], 's', '0', 't', ARGV[1], 'f', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {}
