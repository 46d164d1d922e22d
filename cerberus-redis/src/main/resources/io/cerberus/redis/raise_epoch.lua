-- Cerberus raise epoch: KEYS the namespace's epoch key (cerberus:{NS:}:epoch); ARGV the least epoch wanted,
-- positive, in decimal without leading zeros. Sets the epoch to it unless it is already as high (never lowers
-- it), kept for ever (no expiry: one key per namespace). Returns the epoch after, as a string: compared
-- exactly, never as a Lua double.
local stored = redis.call('GET', KEYS[1])
local wanted = ARGV[1]
if stored and (#stored > #wanted or #stored == #wanted and stored >= wanted) then
  return stored
end
redis.call('SET', KEYS[1], wanted)
return wanted
