-- Cerberus inspect: KEYS owner, readers, reader-info. Returns
-- {{mode, holder, fence, pttl} or {}, {holder, fence, remaining ms, ...} of live readers}
-- No waiter count: exclusive waiters never queue, so the queue's length would undercount them.
local owner, readers, info = KEYS[1], KEYS[2], KEYS[3]
local now = server_time()
local hold = {}
if redis.call('EXISTS', owner) == 1 then
  local h = redis.call('HMGET', owner, 'mode', 'holder', 'fence')
  hold = {h[1] or 'exclusive', h[2] or '', h[3] or '-1', redis.call('PTTL', owner)}
end
local shared = {}
local live = redis.call('ZRANGEBYSCORE', readers, '(' .. now, '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  local entry = redis.call('HGET', info, live[i]) or '-1:'
  local f, holder = string.match(entry, '^(%-?%d+):(.*)$')
  shared[#shared + 1] = holder or ''
  shared[#shared + 1] = f or '-1'
  shared[#shared + 1] = tonumber(live[i + 1]) - now
end
return {hold, shared}
