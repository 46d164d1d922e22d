-- Cerberus fenced GET: reads the value and records the reader's fence, so no older holder writes after it.
-- {1, fence, 1, value} or {1, fence, 0} (no such key); {0, newest fence} refused, nothing read or recorded.
local fresh, seen = check_fence(KEYS[2], ARGV[1], ARGV[2])
if not fresh then
  return {0, seen}
end
local value = redis.call('GET', KEYS[1])
keep_fence(KEYS[1], KEYS[2], seen, ARGV[3])
if value then
  return {1, seen, 1, value}
end
return {1, seen, 0}
