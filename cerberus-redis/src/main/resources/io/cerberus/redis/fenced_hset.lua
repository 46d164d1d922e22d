-- Cerberus fenced HSET: ARGV[4], ARGV[5], ... field, value pairs (at least one). The hash keeps its expiry.
-- {1, fence} written with the caller's fence; {0, newest fence} refused, nothing written.
local fresh, seen = check_fence(KEYS[2], ARGV[1], ARGV[2])
if not fresh then
  return {0, seen}
end
for i = 4, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
keep_fence(KEYS[1], KEYS[2], seen, ARGV[3])
return {1, seen}
