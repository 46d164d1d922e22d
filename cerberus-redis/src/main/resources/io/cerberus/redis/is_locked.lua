-- Cerberus is-locked: KEYS owner, readers. Returns 1 if a writer or a live reader holds.
local now = server_time()
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 1
end
if redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') > 0 then
  return 1
end
return 0
