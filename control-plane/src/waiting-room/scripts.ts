import type { Redis } from 'ioredis';
import { type RoomKeys, roomKeys } from './keys';

/** Join: idempotent per buyer; before the room opens the score is the random key drawn by the caller. */
const JOIN = `
local m = redis.call('HMGET', KEYS[1], 'opensAt', 'open', 'closed')
if not m[1] then return {'no_room', '0'} end
if m[3] == '1' then return {'closed', '0'} end
local now = tonumber(ARGV[2])
local open = m[2] == '1'
if not open and now >= tonumber(m[1]) then
  redis.call('HSET', KEYS[1], 'open', '1')
  open = true
end
local member = ARGV[1]
local st = redis.call('HGET', KEYS[4], member)
if st == 'w' then
  redis.call('ZADD', KEYS[5], now, member)
  return {'waiting', '0'}
end
if st == 'r' then
  local slot = redis.call('ZSCORE', KEYS[6], member)
  if slot and tonumber(slot) > now then return {'released', '0'} end
  redis.call('ZREM', KEYS[6], member)
  redis.call('HDEL', KEYS[7], member)
end
local score
if open then
  score = string.format('%d', 1099511627776 + redis.call('INCR', KEYS[3]))
else
  score = ARGV[3]
end
redis.call('ZADD', KEYS[2], score, member)
redis.call('HSET', KEYS[4], member, 'w')
redis.call('ZADD', KEYS[5], now, member)
return {'waiting', '1'}
`;

/** Status: marks the waiter as seen and reads their place, or their release record. */
const STATUS = `
local m = redis.call('HMGET', KEYS[1], 'open', 'soldOut', 'rate', 'releasing', 'closed', 'paused', 'opensAt')
local st = redis.call('HGET', KEYS[3], ARGV[1])
local rank = -1
local rel = ''
if st == 'w' then
  redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
  local r = redis.call('ZRANK', KEYS[2], ARGV[1])
  if r then rank = r end
elseif st == 'r' then
  rel = redis.call('HGET', KEYS[5], ARGV[1]) or ''
end
return {st or '', rank, rel, m[1] or '0', m[2] or '0', m[3] or '0', m[4] or '0', m[5] or '0', m[6] or '0', m[7] or ''}
`;

/**
 * Release: R buyers per second in queue order (a budget carried between ticks, at most one
 * second's worth), skipping waiters silent for longer than the abandonment window, bounded by
 * the active-shopper cap. Stops while the event is sold out or paused.
 */
const RELEASE = `
local now = tonumber(ARGV[1])
local m = redis.call('HMGET', KEYS[1], 'releasing', 'soldOut', 'rate', 'carry', 'lastAt', 'maxActive', 'paused')
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', '(' .. ARGV[1])
local active = redis.call('ZCARD', KEYS[5])
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
local abandonMs = tonumber(ARGV[2])
while #out < n and scanned < maxScan do
  local p = redis.call('ZPOPMIN', KEYS[2])
  if #p == 0 then break end
  scanned = scanned + 1
  local member = p[1]
  local seen = tonumber(redis.call('ZSCORE', KEYS[4], member) or '0')
  redis.call('ZREM', KEYS[4], member)
  if now - seen > abandonMs then
    redis.call('HSET', KEYS[3], member, 's')
    skipped = skipped + 1
  else
    local claimBy = string.format('%d', now + tonumber(ARGV[3]))
    redis.call('HSET', KEYS[3], member, 'r')
    redis.call('HSET', KEYS[6], member, ARGV[1] .. '|' .. claimBy .. '|0|')
    redis.call('ZADD', KEYS[5], claimBy, member)
    out[#out + 1] = member
  end
end
local newCarry = budget - #out
if newCarry < 0 then newCarry = 0 end
redis.call('HSET', KEYS[1], 'carry', tostring(newCarry), 'lastAt', ARGV[1])
if #out > 0 then redis.call('HINCRBY', KEYS[1], 'released', #out) end
if skipped > 0 then redis.call('HINCRBY', KEYS[1], 'skipped', skipped) end
local res = {'ok', active + #out, skipped}
for i = 1, #out do res[#res + 1] = out[i] end
return res
`;

/** Claim: the first fetch after release attaches the token and extends the slot to its expiry. */
const CLAIM = `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur == ARGV[2] and redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
  redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[6])
  return {'claimed', ARGV[5]}
end
local tok = redis.call('GET', KEYS[3])
if tok then return {'existing', tok} end
return {'gone', ''}
`;

/** Token bucket: rate per second, burst; answers allowed (1/0) and ms until the next token. */
const BUCKET = `
local b = redis.call('HMGET', KEYS[1], 't', 'ts')
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local tokens = tonumber(b[1]) or burst
local ts = tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
local retry = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  retry = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'ts', ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, retry}
`;

export const LUA = { JOIN, STATUS, RELEASE, CLAIM, BUCKET };

export interface RoomRedis extends Redis {
  wrJoin(...args: (string | number)[]): Promise<[string, string]>;
  wrStatus(
    ...args: (string | number)[]
  ): Promise<[string, number, string, string, string, string, string, string, string, string]>;
  wrRelease(...args: (string | number)[]): Promise<[string, number, number, ...string[]]>;
  wrClaim(...args: (string | number)[]): Promise<[string, string]>;
  wrBucket(...args: (string | number)[]): Promise<[number, number]>;
}

/** Registers the scripts (EVALSHA with EVAL fallback, through ioredis). */
export function withRoomScripts(redis: Redis): RoomRedis {
  const r = redis as RoomRedis;
  if (typeof r.wrJoin === 'function') return r;
  redis.defineCommand('wrJoin', { numberOfKeys: JOIN_KEY_COUNT, lua: JOIN });
  redis.defineCommand('wrStatus', { numberOfKeys: STATUS_KEY_COUNT, lua: STATUS });
  redis.defineCommand('wrRelease', { numberOfKeys: 6, lua: RELEASE });
  redis.defineCommand('wrClaim', { numberOfKeys: 3, lua: CLAIM });
  redis.defineCommand('wrBucket', { numberOfKeys: 1, lua: BUCKET });
  return r;
}

/** KEYS[] of JOIN, in its order: join.ts and the benchmark both build them here. */
export const joinKeys = (k: RoomKeys) => [k.meta, k.queue, k.seq, k.state, k.seen, k.admitted, k.release];
/** KEYS[] of STATUS, in its order. */
export const statusKeys = (k: RoomKeys) => [k.meta, k.queue, k.state, k.seen, k.release];
const JOIN_KEY_COUNT = joinKeys(roomKeys('', '')).length;
const STATUS_KEY_COUNT = statusKeys(roomKeys('', '')).length;
