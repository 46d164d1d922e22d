-- Cerberus renew, batched: KEYS owner, readers, reader-info for each hold;
-- ARGV token, mode, lease ms for each hold. Returns 1 (renewed) or 0 (no longer held) per hold.
local now = server_time()
local result = {}
for i = 1, #ARGV / 3 do
  local owner, readers, info = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local token, mode, lease = ARGV[3 * i - 2], ARGV[3 * i - 1], tonumber(ARGV[3 * i])
  local renewed = 0
  if mode == 'read' then
    local expiry = redis.call('ZSCORE', readers, token)
    if expiry and tonumber(expiry) > now then
      redis.call('ZADD', readers, now + lease, token)
      expire_readers(readers, info, now)
      renewed = 1
    end
  elseif redis.call('HGET', owner, 'token') == token then
    redis.call('PEXPIRE', owner, lease)
    renewed = 1
  end
  result[i] = renewed
end
return result
