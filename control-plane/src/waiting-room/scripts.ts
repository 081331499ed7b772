import type { Redis } from 'ioredis';
import { ARRIVALS_PER_MS, POST_OPEN_BASE, type RoomKeys, roomKeys } from './keys';

/**
 * A buyer's entry in the state hash, the one per-buyer record besides their queue entry: the
 * second they were last seen while waiting (a number), `r` once released, `s` once skipped for
 * silence. Folding "last seen" into the state (it was a second sorted set) is what keeps a queued
 * buyer near 170 bytes of Redis: a queue entry and one small hash field.
 */
const SEEN = `
local function seenAt(nowMs) return string.format('%d', math.floor(tonumber(nowMs) / 1000)) end
`;

/**
 * Token buckets (rate per second, burst). A call carries the buckets it is charged to after the
 * room's own keys and arguments: KEYS[k0 + 1..], and from ARGV[a0 + 1] two arguments each (rate,
 * burst). They are charged in order, and a refusal stops there: the IP's refusal leaves the
 * buyer's bucket as it was. refused() answers the ms until a token, or nil when every bucket allowed.
 */
const BUCKETS = `
local function charge(key, rate, burst, now)
  local b = redis.call('HMGET', key, 't', 'ts')
  local tokens = tonumber(b[1]) or burst
  local ts = tonumber(b[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
  local wait = nil
  if tokens >= 1 then
    tokens = tokens - 1
  else
    wait = math.ceil((1 - tokens) * 1000 / rate)
  end
  redis.call('HSET', key, 't', tostring(tokens), 'ts', string.format('%d', now))
  redis.call('PEXPIRE', key, math.ceil(burst * 1000 / rate) + 1000)
  return wait
end
local function refused(k0, a0, nowArg)
  local now = tonumber(nowArg)
  for i = k0 + 1, #KEYS do
    local j = a0 + (i - k0 - 1) * 2
    local wait = charge(KEYS[i], tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2]), now)
    if wait then return wait end
  end
  return nil
end
`;

/**
 * What a poll answers, read in the same call that joined or marked the buyer seen (one round trip):
 * state code (w, r, s or ''), rank, release record, then the room's flags, onsaleAt, cell and epoch; then what a queue
 * ticket carries: the waiter's score, how many the shard has released or skipped, and the room's generation.
 * KEYS: meta, queue, state, release.
 */
const DESCRIBE = `
local function describe(member, st)
  local m = redis.call('HMGET', KEYS[1], 'open', 'soldOut', 'rate', 'releasing', 'closed', 'paused', 'onsaleAt', 'cell', 'epoch', 'released', 'skipped', 'gen')
  local code = ''
  local rank = -1
  local rel = ''
  local score = ''
  if st == 'r' then
    code = 'r'
    rel = redis.call('HGET', KEYS[4], member) or ''
  elseif st == 's' then
    code = 's'
  elseif st then
    code = 'w'
    local r = redis.call('ZRANK', KEYS[2], member)
    if r then rank = r end
    score = redis.call('ZSCORE', KEYS[2], member) or ''
  end
  local passed = (tonumber(m[10] or '0') or 0) + (tonumber(m[11] or '0') or 0)
  return {code, rank, rel, m[1] or '0', m[2] or '0', m[3] or '0', m[4] or '0', m[5] or '0', m[6] or '0', m[7] or '', m[8] or '', m[9] or '0', score, passed, m[12] or ''}
end
`;

/**
 * Join: idempotent per buyer; before the room opens the score is the buyer's shuffle key, computed by the caller
 * from the seed it holds for the room: a caller whose seed is not the one the room committed to (an onsale
 * scheduled again under a new seed since it cached it), or who holds none (''), gets {'stale_fairness'} and
 * nothing changes. A room configured before commitments existed adopts the caller's, read from the onsale record.
 * After it opens, a room of one shard numbers its arrivals (seq); a shard of a sharded room ('ms') gives each the
 * millisecond of its arrival since the room's opening and its number within that millisecond (ARRIVALS_PER_MS),
 * never going back (a late clock takes the last arrival's millisecond), so the shards' queues merge into one order.
 * Answers {outcome, joined} followed by the buyer's status (DESCRIBE), or {'rate_limited', ms}.
 * KEYS: meta, queue, state, release, seq, admitted, then the buckets.
 * ARGV: buyer, now, shuffle key, the seed's commitment, arrival order ('' or 'ms'), then the buckets'.
 */
const JOIN = `${SEEN}${DESCRIBE}${BUCKETS}
local wait = refused(${joinKeys(roomKeys('', '')).length}, 5, ARGV[2])
if wait then return {'rate_limited', wait} end
local m = redis.call('HMGET', KEYS[1], 'opensAt', 'open', 'closed', 'fcommit')
if not m[1] then return {'no_room', '0'} end
if m[3] == '1' then return {'closed', '0'} end
local now = tonumber(ARGV[2])
local open = m[2] == '1'
if not open and now >= tonumber(m[1]) then
  redis.call('HSET', KEYS[1], 'open', '1')
  open = true
end
local member = ARGV[1]
local seen = seenAt(ARGV[2])
local st = redis.call('HGET', KEYS[3], member)
local function answer(outcome, joined, state)
  local out = {outcome, joined}
  for _, v in ipairs(describe(member, state)) do out[#out + 1] = v end
  return out
end
if st and st ~= 'r' and st ~= 's' then
  redis.call('HSET', KEYS[3], member, seen)
  return answer('waiting', '0', seen)
end
if st == 'r' then
  local slot = redis.call('ZSCORE', KEYS[6], member)
  if slot and tonumber(slot) > now then return answer('released', '0', st) end
  redis.call('ZREM', KEYS[6], member)
  redis.call('HDEL', KEYS[4], member)
end
local score
if open and ARGV[5] == 'ms' then
  local q = redis.call('HMGET', KEYS[1], 'seqMs', 'seqN')
  local last = tonumber(q[1] or '')
  local ms = now
  local n = 0
  if last and last >= now then
    ms = last
    n = math.min((tonumber(q[2]) or 0) + 1, ${ARRIVALS_PER_MS - 1})
  end
  redis.call('HSET', KEYS[1], 'seqMs', string.format('%d', ms), 'seqN', n)
  score = string.format('%d', ${POST_OPEN_BASE} + math.max(0, ms - tonumber(m[1])) * ${ARRIVALS_PER_MS} + n)
elseif open then
  score = string.format('%d', ${POST_OPEN_BASE} + redis.call('INCR', KEYS[5]))
else
  if ARGV[4] == '' or (m[4] and m[4] ~= ARGV[4]) then return {'stale_fairness', '0'} end
  if not m[4] then redis.call('HSET', KEYS[1], 'fcommit', ARGV[4]) end
  score = ARGV[3]
end
redis.call('ZADD', KEYS[2], score, member)
redis.call('HSET', KEYS[3], member, seen)
return answer('waiting', '1', seen)
`;

/**
 * Status: marks the waiter as seen and reads their place, or their release record (DESCRIBE); or {'rate_limited', ms}.
 * KEYS: meta, queue, state, release, then the buckets. ARGV: buyer, now, then the buckets'.
 */
const STATUS = `${SEEN}${DESCRIBE}${BUCKETS}
local wait = refused(${statusKeys(roomKeys('', '')).length}, 2, ARGV[2])
if wait then return {'rate_limited', wait} end
local st = redis.call('HGET', KEYS[3], ARGV[1])
if st and st ~= 'r' and st ~= 's' then
  st = seenAt(ARGV[2])
  redis.call('HSET', KEYS[3], ARGV[1], st)
end
return describe(ARGV[1], st)
`;

/**
 * The release step's verdict on the buyer it took from the head of a queue: skipped for silence, or released
 * (claim window opened); early arrivals' fates go to the admission log, once. True when released.
 * KEYS: meta, queue, state, admitted, release, fairLog. ARGV: now, abandon ms, claim window ms.
 */
const TAKE = `
local function take(member, score)
  local now = tonumber(ARGV[1])
  local early = tonumber(score) < ${POST_OPEN_BASE}
  local seen = (tonumber(redis.call('HGET', KEYS[3], member) or '0') or 0) * 1000
  if now - seen > tonumber(ARGV[2]) then
    redis.call('HSET', KEYS[3], member, 's')
    if early then redis.call('HSETNX', KEYS[6], member, score .. '|s|' .. ARGV[1]) end
    return false
  end
  if early then redis.call('HSETNX', KEYS[6], member, score .. '|r|' .. ARGV[1]) end
  local claimBy = string.format('%d', now + tonumber(ARGV[3]))
  redis.call('HSET', KEYS[3], member, 'r')
  redis.call('HSET', KEYS[5], member, ARGV[1] .. '|' .. claimBy .. '|0|')
  redis.call('ZADD', KEYS[4], claimBy, member)
  return true
end
`;

/**
 * Release: R buyers per second in queue order (a budget carried between ticks, at most one
 * second's worth), skipping waiters silent for longer than the abandonment window, bounded by
 * the active-shopper cap. Stops while the event is sold out or paused. What happened to each
 * early arrival (their shuffle key, released or skipped, when) goes to the admission log, once.
 * KEYS: meta, queue, state, admitted, release, fairLog.
 */
const RELEASE = `${TAKE}
local now = tonumber(ARGV[1])
local m = redis.call('HMGET', KEYS[1], 'releasing', 'soldOut', 'rate', 'carry', 'lastAt', 'maxActive', 'paused')
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[1])
local active = redis.call('ZCARD', KEYS[4])
if m[1] ~= '1' then return {'not_releasing', active, 0} end
if m[2] == '1' or m[7] == '1' then
  redis.call('HSET', KEYS[1], 'carry', '0', 'lastAt', ARGV[1])
  if m[2] == '1' then return {'sold_out', active, 0} end
  return {'paused', active, 0}
end
local rate = tonumber(m[3] or '0') or 0
local last = tonumber(m[5] or ARGV[1]) or now
local carry = tonumber(m[4] or '0') or 0
local cap = math.max(rate, 1)
local budget = carry + rate * math.max(0, now - last) / 1000
if budget > cap then budget = cap end
local n = math.floor(budget)
local maxActive = tonumber(m[6] or '')
if maxActive and maxActive > 0 then n = math.min(n, math.max(0, maxActive - active)) end
n = math.min(n, tonumber(ARGV[4]))
local out = {}
local skipped = 0
local scanned = 0
local maxScan = tonumber(ARGV[5])
local upto = nil
while #out < n and scanned < maxScan do
  local p = redis.call('ZPOPMIN', KEYS[2])
  if #p == 0 then break end
  scanned = scanned + 1
  upto = p[2]
  if take(p[1], p[2]) then out[#out + 1] = p[1] else skipped = skipped + 1 end
end
local newCarry = budget - #out
if newCarry < 0 then newCarry = 0 end
redis.call('HSET', KEYS[1], 'carry', tostring(newCarry), 'lastAt', ARGV[1])
if upto then redis.call('HSET', KEYS[1], 'upto', upto) end
if #out > 0 then redis.call('HINCRBY', KEYS[1], 'released', #out) end
if skipped > 0 then redis.call('HINCRBY', KEYS[1], 'skipped', skipped) end
local res = {'ok', active + #out, skipped}
for i = 1, #out do res[#res + 1] = out[i] end
return res
`;

/**
 * A sharded room's release step (shards.ts) in three scripts. BUDGET, on the first shard (which keeps the room's R
 * and its carried budget), takes how many buyers this step may admit across all shards, at most ARGV[3], given the
 * active shoppers of all shards (ARGV[2]); the budget not used is given back by REFUND. SHARD_RELEASE then takes
 * exactly as many buyers from one shard's head as the merge of the shards' heads gave it (ARGV[4]), none scored
 * above ARGV[6] (the last score the merge took), skipping silent ones as RELEASE does, and records how far it got.
 */
const BUDGET = `
local now = tonumber(ARGV[1])
local m = redis.call('HMGET', KEYS[1], 'releasing', 'soldOut', 'rate', 'carry', 'lastAt', 'maxActive', 'paused')
if m[1] ~= '1' then return {'not_releasing', 0} end
if m[2] == '1' or m[7] == '1' then
  redis.call('HSET', KEYS[1], 'carry', '0', 'lastAt', ARGV[1])
  if m[2] == '1' then return {'sold_out', 0} end
  return {'paused', 0}
end
local rate = tonumber(m[3] or '0') or 0
local last = tonumber(m[5] or ARGV[1]) or now
local budget = (tonumber(m[4] or '0') or 0) + rate * math.max(0, now - last) / 1000
budget = math.min(budget, math.max(rate, 1))
local n = math.floor(budget)
local maxActive = tonumber(m[6] or '')
if maxActive and maxActive > 0 then n = math.min(n, math.max(0, maxActive - tonumber(ARGV[2]))) end
n = math.min(n, tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'carry', tostring(budget - n), 'lastAt', ARGV[1])
return {'ok', n}
`;
const REFUND = `
local m = redis.call('HMGET', KEYS[1], 'carry', 'rate')
local cap = math.max(tonumber(m[2] or '0') or 0, 1)
redis.call('HSET', KEYS[1], 'carry', tostring(math.min(cap, (tonumber(m[1] or '0') or 0) + tonumber(ARGV[1]))))
return 1
`;
/** KEYS: admitted. ARGV: now. Drops lapsed slots and counts the live ones. */
const ACTIVE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
return redis.call('ZCARD', KEYS[1])
`;
/** KEYS: as RELEASE's. ARGV: now, abandon ms, claim window ms, n, max scanned, highest score. Answers {skipped, upto, released...}. */
const SHARD_RELEASE = `${TAKE}
local n = tonumber(ARGV[4])
local top = tonumber(ARGV[6])
local out = {}
local skipped = 0
local scanned = 0
local upto = ''
while #out < n and scanned < tonumber(ARGV[5]) do
  local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if #head == 0 or tonumber(head[2]) > top then break end
  redis.call('ZREM', KEYS[2], head[1])
  scanned = scanned + 1
  upto = head[2]
  if take(head[1], head[2]) then out[#out + 1] = head[1] else skipped = skipped + 1 end
end
if upto ~= '' then redis.call('HSET', KEYS[1], 'upto', upto) end
if #out > 0 then redis.call('HINCRBY', KEYS[1], 'released', #out) end
if skipped > 0 then redis.call('HINCRBY', KEYS[1], 'skipped', skipped) end
local res = {skipped, upto}
for i = 1, #out do res[#res + 1] = out[i] end
return res
`;

/**
 * Claim: the first fetch after release attaches the token and extends the slot to its expiry.
 * A fetch that lost the race gets the winner's token and record, so it answers without another read.
 */
const CLAIM = `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur == ARGV[2] and redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
  redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[6])
  return {'claimed', ARGV[5], ARGV[3]}
end
local tok = redis.call('GET', KEYS[3])
if tok then return {'existing', tok, redis.call('HGET', KEYS[1], ARGV[1]) or ''} end
return {'gone', '', ''}
`;

/** Marks the waiters among ARGV[2..] as seen at ARGV[1] (ms): the ticket polls a process answered since its last call. KEYS: state. */
const SEEN_BATCH = `${SEEN}
local seen = seenAt(ARGV[1])
for i = 2, #ARGV do
  local st = redis.call('HGET', KEYS[1], ARGV[i])
  if st and st ~= 'r' and st ~= 's' then redis.call('HSET', KEYS[1], ARGV[i], seen) end
end
return #ARGV - 1
`;

/** The rate limits, charged in order until one refuses: the IP's bucket before a token is checked (LIMITS). */
const LIMITS = `${BUCKETS}
local wait = refused(0, 1, ARGV[1])
if wait then return {0, wait} end
return {1, 0}
`;

export const LUA = { JOIN, STATUS, RELEASE, CLAIM, LIMITS, BUDGET, REFUND, ACTIVE, SHARD_RELEASE, SEEN_BATCH };

/**
 * DESCRIBE's answer: state code, rank, release record, open, soldOut, rate, releasing, closed, paused, onsaleAt, cell,
 * epoch, then for a queue ticket: score, passed, generation.
 */
export type RawStatus = [
  string,
  number,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  number,
  string,
];

/** What a room call answers instead when one of its buckets refused: the ms until that bucket has a token. */
export type RateLimited = ['rate_limited', number];
export const isRateLimited = (raw: readonly unknown[]): raw is RateLimited => raw[0] === 'rate_limited';

/**
 * Update: writes fields of a room's settings only if the room is configured (its onsaleAt set), so a controller or
 * placement write racing a Redis that lost the room cannot leave a partial hash the scheduler would take for a room.
 * KEYS: meta. ARGV: field, value, ... Returns 1 when written, 0 when the room is missing.
 */
const UPDATE = `
if redis.call('HEXISTS', KEYS[1], 'onsaleAt') == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

/**
 * Readmit (an evacuation's flip, moveRoom): every release record whose admission was collected and has not expired
 * goes back to "released, not yet collected" with a new claim deadline, and its token is dropped, so the buyer's
 * next poll collects an admission for the room's new placement. KEYS: release, admitted. ARGV: now (ms), claim
 * window (ms), the token keys' prefix (same hash tag). Returns how many records it reset.
 */
const READMIT = `
local rel = redis.call('HGETALL', KEYS[1])
local n = 0
for i = 1, #rel, 2 do
  local member = rel[i]
  local releasedAt, claimBy, exp = string.match(rel[i + 1], '^([^|]*)|([^|]*)|([^|]*)|')
  if exp and exp ~= '0' and tonumber(exp) > tonumber(ARGV[1]) then
    local newClaimBy = string.format('%d', tonumber(ARGV[1]) + tonumber(ARGV[2]))
    redis.call('HSET', KEYS[1], member, releasedAt .. '|' .. newClaimBy .. '|0|')
    redis.call('ZADD', KEYS[2], newClaimBy, member)
    redis.call('DEL', ARGV[3] .. member)
    n = n + 1
  end
end
return n
`;

/**
 * JOIN, STATUS and LIMITS take their number of keys first: the room's keys, then the buckets' (none when the
 * caller is not rate limited, as the release's own reads are not).
 */
export interface RoomRedis extends Redis {
  /** {outcome, joined} then, unless the room is missing or closed, the buyer's RawStatus. */
  wrJoin(...args: (string | number)[]): Promise<[string, string, ...RawStatus] | [string, string] | RateLimited>;
  wrStatus(...args: (string | number)[]): Promise<RawStatus | RateLimited>;
  wrRelease(...args: (string | number)[]): Promise<[string, number, number, ...string[]]>;
  wrClaim(...args: (string | number)[]): Promise<[string, string, string]>;
  /** {1, 0} when every bucket allowed, else {0, ms until a token}. */
  wrLimits(...args: (string | number)[]): Promise<[number, number]>;
  wrBudget(meta: string, now: number, active: number, max: number): Promise<[string, number]>;
  wrRefund(meta: string, unused: number): Promise<number>;
  wrActive(admitted: string, now: number): Promise<number>;
  wrSeenBatch(state: string, now: number, ...buyers: string[]): Promise<number>;
  /** {skipped, upto, ...released}. */
  wrShardRelease(...args: (string | number)[]): Promise<[number, string, ...string[]]>;
  wrUpdate(meta: string, ...fieldsAndValues: (string | number)[]): Promise<number>;
  wrReadmit(
    release: string,
    admitted: string,
    now: number,
    claimWindowMs: number,
    tokenPrefix: string,
  ): Promise<number>;
}

/** Registers the scripts (EVALSHA with EVAL fallback, through ioredis). */
export function withRoomScripts(redis: Redis): RoomRedis {
  const r = redis as RoomRedis;
  if (typeof r.wrJoin === 'function') return r;
  redis.defineCommand('wrJoin', { lua: JOIN });
  redis.defineCommand('wrStatus', { lua: STATUS });
  redis.defineCommand('wrRelease', { numberOfKeys: RELEASE_KEY_COUNT, lua: RELEASE });
  redis.defineCommand('wrClaim', { numberOfKeys: 3, lua: CLAIM });
  redis.defineCommand('wrLimits', { lua: LIMITS });
  redis.defineCommand('wrBudget', { numberOfKeys: 1, lua: BUDGET });
  redis.defineCommand('wrRefund', { numberOfKeys: 1, lua: REFUND });
  redis.defineCommand('wrActive', { numberOfKeys: 1, lua: ACTIVE });
  redis.defineCommand('wrSeenBatch', { numberOfKeys: 1, lua: SEEN_BATCH });
  redis.defineCommand('wrShardRelease', { numberOfKeys: RELEASE_KEY_COUNT, lua: SHARD_RELEASE });
  redis.defineCommand('wrUpdate', { numberOfKeys: 1, lua: UPDATE });
  redis.defineCommand('wrReadmit', { numberOfKeys: 2, lua: READMIT });
  return r;
}

/** KEYS[] of STATUS, in its order (DESCRIBE reads the first four). */
export function statusKeys(k: RoomKeys): string[] {
  return [k.meta, k.queue, k.state, k.release];
}
/** KEYS[] of JOIN, in its order: join.ts and the benchmark both build them here. */
export function joinKeys(k: RoomKeys): string[] {
  return [...statusKeys(k), k.seq, k.admitted];
}
/** KEYS[] of RELEASE, in its order. */
export const releaseKeys = (k: RoomKeys) => [k.meta, k.queue, k.state, k.admitted, k.release, k.fairLog];
const RELEASE_KEY_COUNT = releaseKeys(roomKeys('', '')).length;
