-- Cerberus idempotency claim: KEYS record; ARGV token, fingerprint, lease ms.
-- Returns {} when the caller now owns the key (an IN_PROGRESS record, created with its expiry in this one
-- script, so it can never outlive its lease), else the record: {state, token, fingerprint, result, failure}.
local r = redis.call('HMGET', KEYS[1], 's', 't', 'f', 'r', 'x')
if r[1] then
  return r
end
redis.call('HSET', KEYS[1], 's', '0', 't', ARGV[1], 'f', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {}
