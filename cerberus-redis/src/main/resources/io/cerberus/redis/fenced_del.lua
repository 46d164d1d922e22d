-- Cerberus fenced DEL: the data goes, its fence stays (a tombstone, for the retention after the data).
-- {1, fence, 1|0 whether the data existed}; {0, newest fence} refused, nothing deleted.
local fresh, seen = check_fence(KEYS[2], ARGV[1], ARGV[2])
if not fresh then
  return {0, seen}
end
local deleted = redis.call('DEL', KEYS[1])
keep_fence(KEYS[1], KEYS[2], seen, ARGV[3])
return {1, seen, deleted}
