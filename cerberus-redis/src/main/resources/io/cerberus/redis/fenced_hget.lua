-- Cerberus fenced HGET: ARGV[4] the field. Reads it and records the reader's fence, as fenced_get.lua.
-- {1, fence, 1, value} or {1, fence, 0} (no such field); {0, newest fence} refused, nothing read or recorded.
local fresh, seen = check_fence(KEYS[2], ARGV[1], ARGV[2])
if not fresh then
  return {0, seen}
end
local value = redis.call('HGET', KEYS[1], ARGV[4])
keep_fence(KEYS[1], KEYS[2], seen, ARGV[3])
if value then
  return {1, seen, 1, value}
end
return {1, seen, 0}
