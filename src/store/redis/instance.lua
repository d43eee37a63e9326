-- instance.lua: a family instance's keys leave Redis by themselves `ttl` ms after its
-- last write; put after rules.lua (whose locals it uses) in front of vote.lua and
-- score.lua. A plain board's writes pass no TTL and never come here.
--
-- Every key of a write from KEYS[first] to KEYS[last] gets that expiry, with two kinds
-- of keys kept apart: a rule's counter or log (KEYS[rule_key + 1 .. rule_key + 2r]) is
-- left to rules.lua, which gives it its window's time capped at the instance's TTL (the
-- engine caps it: `RuleScope::lifetime`), so no counter outlives the instance; the
-- idempotency record (KEYS[first], when `keyed`) never gains time (LT), so it keeps its
-- own shorter TTL. `seen` holds the keys a call has already expired: a call of several
-- writes to one instance shares most of them, and one write passes some keys twice (a
-- layout's unused key slots name a key it has).
local function instance_expire(first, last, keyed, rule_key, r, ttl, seen)
  for k = first, last do
    local key = KEYS[k]
    if not seen[key] then
      seen[key] = true
      if k == first and keyed then
        call('PEXPIRE', key, ttl, 'LT')
      elseif k <= rule_key or k > rule_key + 2 * r then
        call('PEXPIRE', key, ttl)
      end
    end
  end
end
