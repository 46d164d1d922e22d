-- Cerberus fenced SET: ARGV[4] the value, ARGV[5] its expiry ms ('' = none).
-- {1, fence} written with the caller's fence; {0, newest fence} refused, nothing written.
local fresh, seen = check_fence(KEYS[2], ARGV[1], ARGV[2])
if not fresh then
  return {0, seen}
end
if ARGV[5] == '' then
  redis.call('SET', KEYS[1], ARGV[4])
else
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
end
keep_fence(KEYS[1], KEYS[2], seen, ARGV[3])
return {1, seen}
