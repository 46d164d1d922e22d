-- Cerberus fenced data (FencedRedis): functions shared by the fenced_*.lua scripts (prepended to each).
-- KEYS[1] the application's data key, KEYS[2] its fence key (same hash slot): a string "EPOCH:TOKEN", the
-- newest fence seen for the data, in decimal without leading zeros. ARGV[1] the caller's epoch, ARGV[2] its
-- token (the same form), ARGV[3] how long the fence outlives the data, ms ('' = for ever).

-- compares two decimal strings without leading zeros exactly (no conversion to a double): -1, 0 or 1
local function compare_decimal(a, b)
  if #a ~= #b then
    return #a < #b and -1 or 1
  end
  if a == b then
    return 0
  end
  return a < b and -1 or 1
end

-- the caller's fence against the stored one: true and the caller's fence text if it is as new or newer
-- (or none is stored), false and the stored fence text if the caller's is older
local function check_fence(fence, epoch, token)
  local stored = redis.call('GET', fence)
  if stored then
    local colon = string.find(stored, ':', 1, true)
    if not colon then
      error({err = 'ERR cerberus: the fence key ' .. fence .. ' holds "' .. stored .. '", not EPOCH:TOKEN'})
    end
    local order = compare_decimal(epoch, string.sub(stored, 1, colon - 1))
    if order == 0 then
      order = compare_decimal(token, string.sub(stored, colon + 1))
    end
    if order < 0 then
      return false, stored
    end
  end
  return true, epoch .. ':' .. token
end

-- stores the fence so that it lives as long as the data and then retention ms more ('' = for ever)
local function keep_fence(data, fence, text, retention)
  redis.call('SET', fence, text)
  if retention == '' then
    return
  end
  local ttl = redis.call('PTTL', data)
  if ttl == -1 then
    return
  end
  redis.call('PEXPIRE', fence, math.max(ttl, 0) + tonumber(retention))
end
