import type { Redis } from 'ioredis';
import { roomKeys } from '../waiting-room/keys';

/**
 * After the flip: every buyer already released by the waiting room keeps their turn, but the
 * admission they collected names the old cell. Their release record goes back to "released, not
 * yet collected" with a fresh claim window, so their next poll of /queue/me mints a token for the
 * new cell (the room's placement is updated first). Nobody loses their place; nobody is released
 * twice (the release counters are untouched). Safe to run again.
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

export async function readmitReleasedBuyers(
  redis: Redis,
  prefix: string,
  eventId: string,
  nowMs: number,
  claimWindowSeconds: number,
): Promise<number> {
  const k = roomKeys(prefix, eventId);
  const tokenPrefix = k.token('');
  return Number(await redis.eval(READMIT, 2, k.release, k.admitted, nowMs, claimWindowSeconds * 1000, tokenPrefix));
}
