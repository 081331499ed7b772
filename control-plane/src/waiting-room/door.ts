import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { DomainError, metrics } from '@onsale/contracts';
import { leadingZeroBits, powInput } from '@onsale/contracts/device-proof';
import { eq } from 'drizzle-orm';
import { countBotSignal } from '../bot-report/signals';
import type { Services } from '../context';
import { type DoorDefences, doorDefences } from '../db/schema';
import type { BuyerActor } from '../lib/actors';
import { buyerRoomKeys } from './shards';

/**
 * The waiting room's door (control-plane/README.md, "Proof of work and device binding"): what a join must bring,
 * as an operator set it per onsale (PUT /operator/events/{eventId}/door).
 *
 * Proof of work. POST queue/challenge hands the buyer a challenge, stateless: HMAC-SHA256-signed {event, buyer,
 * nonce, difficulty, expiry}. The buyer finds a counter such that SHA-256(`${challenge}:${counter}`) starts with
 * `difficulty` zero bits (contracts/src/device-proof.ts) and joins with both. The join checks the signature, the
 * binding to this event and buyer, the expiry, that the difficulty is still at least the onsale's base, and the
 * work, then spends the challenge (Redis SET NX until its expiry): one challenge, one join.
 *
 * Adaptive difficulty. With `powAdaptiveAbovePerSecond` = A, the challenges issued in the previous second (n) raise
 * the difficulty: none below A, then one bit at A and one more per doubling (n = 2A: +2, 4A: +3), up to
 * `powMaxDifficulty`. Each bit doubles a client's expected work, so a stampede pays for itself while a quiet room
 * costs a buyer only the base.
 */
export const POW_SCHEME = 'onsale-pow/1';
const CHALLENGE_TTL_SECONDS = 120;
/** How long a process trusts its copy of an onsale's door: an operator's change applies within this. */
const DOOR_KEPT_MS = 2000;

export type Door = Pick<
  DoorDefences,
  'powDifficulty' | 'powAdaptiveAbovePerSecond' | 'powMaxDifficulty' | 'requireDeviceBinding'
>;
export const OPEN_DOOR: Door = {
  powDifficulty: 0,
  powAdaptiveAbovePerSecond: null,
  powMaxDifficulty: 24,
  requireDeviceBinding: false,
};

const doors = new WeakMap<Services, Map<string, { door: Door; until: number }>>();

/** The door's settings of a row, without its bookkeeping (event, time of the change). */
const doorOfRow = ({
  powDifficulty,
  powAdaptiveAbovePerSecond,
  powMaxDifficulty,
  requireDeviceBinding,
}: Door): Door => ({
  powDifficulty,
  powAdaptiveAbovePerSecond,
  powMaxDifficulty,
  requireDeviceBinding,
});

export async function doorOf(ctx: Services, eventId: string): Promise<Door> {
  let byEvent = doors.get(ctx);
  if (!byEvent) {
    byEvent = new Map();
    doors.set(ctx, byEvent);
  }
  const now = ctx.clock.now().getTime();
  const hit = byEvent.get(eventId);
  if (hit && hit.until > now) return hit.door;
  const [row] = await ctx.db.select().from(doorDefences).where(eq(doorDefences.eventId, eventId));
  const door = row ? doorOfRow(row) : OPEN_DOOR;
  byEvent.set(eventId, { door, until: now + DOOR_KEPT_MS });
  return door;
}

/** Sets an onsale's door (operator); this process applies it at once, the others within DOOR_KEPT_MS. */
export async function setDoor(ctx: Services, eventId: string, door: Door): Promise<Door> {
  const values = { ...door, updatedAt: ctx.clock.now() };
  const [row] = await ctx.db
    .insert(doorDefences)
    .values({ eventId, ...values })
    .onConflictDoUpdate({ target: doorDefences.eventId, set: values })
    .returning();
  doors.get(ctx)?.delete(eventId);
  return doorOfRow(row!);
}

/** The signing key of challenges, derived from the KEK every API process has: no new secret to deploy or rotate. */
const keys = new WeakMap<Services, Buffer>();
function challengeKey(ctx: Services): Buffer {
  let key = keys.get(ctx);
  if (!key) {
    key = Buffer.from(
      hkdfSync('sha256', Buffer.from(ctx.config.SIGNING_KEY_KEK, 'base64'), Buffer.alloc(0), POW_SCHEME, 32),
    );
    keys.set(ctx, key);
  }
  return key;
}

interface ChallengeClaims {
  /** event id */
  e: string;
  /** the buyer: a hash of their id, so a challenge in a log names nobody */
  b: string;
  n: string;
  d: number;
  /** expiry, ms since the epoch */
  x: number;
}

const buyerBinding = (sub: string) => createHash('sha256').update(sub).digest('base64url').slice(0, 22);
const sign = (ctx: Services, body: string) => createHmac('sha256', challengeKey(ctx)).update(body).digest();

export interface PowChallenge {
  scheme: typeof POW_SCHEME;
  /** Whether this onsale's join asks for the proof at all (difficulty 0: it does not). */
  required: boolean;
  challenge: string;
  difficulty: number;
  expiresAt: string;
}

export async function issueChallenge({
  ctx,
  actor,
  eventId,
}: {
  ctx: Services;
  actor: BuyerActor;
  eventId: string;
}): Promise<PowChallenge> {
  const door = await doorOf(ctx, eventId);
  const now = ctx.clock.now().getTime();
  const difficulty = door.powDifficulty === 0 ? 0 : await currentDifficulty(ctx, eventId, door, now);
  const claims: ChallengeClaims = {
    e: eventId,
    b: buyerBinding(actor.sub),
    n: randomBytes(16).toString('base64url'),
    d: difficulty,
    x: now + CHALLENGE_TTL_SECONDS * 1000,
  };
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  if (difficulty > 0) {
    metrics.powChallenges.inc({ event: eventId, outcome: 'issued' });
    await countBotSignal(ctx, eventId, 'challenges_issued');
  }
  return {
    scheme: POW_SCHEME,
    required: difficulty > 0,
    challenge: `${body}.${sign(ctx, body).toString('base64url')}`,
    difficulty,
    expiresAt: new Date(claims.x).toISOString(),
  };
}

/** The base difficulty, raised by the previous second's issued challenges when the onsale adapts (see above). */
async function currentDifficulty(ctx: Services, eventId: string, door: Door, now: number): Promise<number> {
  if (door.powAdaptiveAbovePerSecond === null) return door.powDifficulty;
  const second = Math.floor(now / 1000);
  const key = (s: number) => `${ctx.prefix}pow:{${eventId}}:issued:${s}`;
  const [, , previous] =
    (await ctx.redis
      .multi()
      .incr(key(second))
      .expire(key(second), 3)
      .get(key(second - 1))
      .exec()) ?? [];
  const rate = Number(previous?.[1] ?? 0);
  const above = door.powAdaptiveAbovePerSecond;
  const extra = rate < above ? 0 : 1 + Math.floor(Math.log2(rate / above));
  return Math.min(door.powMaxDifficulty, door.powDifficulty + extra);
}

export type PowRefusal =
  | 'missing'
  | 'malformed'
  | 'signature'
  | 'other_event'
  | 'other_buyer'
  | 'expired'
  | 'below_difficulty'
  | 'insufficient_work'
  | 'spent';

function refuse(eventId: string, reason: PowRefusal, path: string, message: string, extra: object = {}) {
  metrics.powChallenges.inc({ event: eventId, outcome: 'refused' });
  metrics.powRefusals.inc({ event: eventId, reason });
  return new DomainError('proof_of_work_invalid', message, { reason, issues: [{ path, message }], ...extra });
}

/**
 * Checks a join's proof of work against the onsale's door and spends its challenge; throws proof_of_work_invalid
 * (403, details naming the field) when it falls short.
 */
export async function spendProofOfWork(
  ctx: Services,
  actor: BuyerActor,
  eventId: string,
  door: Door,
  pow: { challenge: string; counter: number } | undefined,
): Promise<void> {
  if (door.powDifficulty === 0) return;
  const now = ctx.clock.now().getTime();
  const claims = checkProofOfWork(ctx, actor, eventId, door, pow, now);
  const spent = await ctx.redis.set(`${ctx.prefix}pow:spent:${claims.n}`, '1', 'PX', claims.x - now, 'NX');
  if (spent === null) throw refuse(eventId, 'spent', 'pow.challenge', 'the challenge was already used for a join');
  metrics.powChallenges.inc({ event: eventId, outcome: 'solved' });
  await countBotSignal(ctx, eventId, 'challenges_solved');
}

/** Everything about a proof but its single use, cheapest first: the server's whole cost of a check but one SET NX. */
export function checkProofOfWork(
  ctx: Services,
  actor: BuyerActor,
  eventId: string,
  door: Door,
  pow: { challenge: string; counter: number } | undefined,
  now: number,
): ChallengeClaims {
  if (!pow)
    throw refuse(
      eventId,
      'missing',
      'pow',
      'this onsale asks for a proof of work: POST queue/challenge, solve it, join with pow',
      {
        requiredDifficulty: door.powDifficulty,
      },
    );
  const [body, mac] = pow.challenge.split('.');
  if (!body || !mac)
    throw refuse(eventId, 'malformed', 'pow.challenge', 'the challenge is not one this platform issues');
  const expected = sign(ctx, body);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw refuse(eventId, 'signature', 'pow.challenge', 'the challenge was not issued by this platform');
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as ChallengeClaims;
  if (claims.e !== eventId) throw refuse(eventId, 'other_event', 'pow.challenge', 'the challenge is for another event');
  if (claims.b !== buyerBinding(actor.sub))
    throw refuse(eventId, 'other_buyer', 'pow.challenge', 'the challenge was issued to another buyer');
  if (now >= claims.x)
    throw refuse(eventId, 'expired', 'pow.challenge', 'the challenge has expired; ask for a new one');
  if (claims.d < door.powDifficulty)
    throw refuse(
      eventId,
      'below_difficulty',
      'pow.challenge',
      `the challenge asks for ${claims.d} bits; this onsale now asks for ${door.powDifficulty}: ask for a new one`,
      { requiredDifficulty: door.powDifficulty },
    );
  const achieved = leadingZeroBits(createHash('sha256').update(powInput(pow.challenge, pow.counter)).digest());
  if (achieved < claims.d)
    throw refuse(
      eventId,
      'insufficient_work',
      'pow.counter',
      `SHA-256(challenge:counter) has ${achieved} leading zero bits; ${claims.d} are required`,
      { requiredDifficulty: claims.d, achievedDifficulty: achieved },
    );
  return claims;
}

/**
 * The device key a join names (its RFC 7638 thumbprint), kept beside the buyer's place until it is bound into their
 * admission token; required when the onsale binds every admission to a device.
 */
export async function recordDeviceKey(
  ctx: Services,
  actor: BuyerActor,
  eventId: string,
  door: Door,
  jkt: string | undefined,
): Promise<void> {
  if (!jkt) {
    if (door.requireDeviceBinding)
      throw new DomainError('validation_failed', 'this onsale binds admission to a device key', {
        issues: [{ path: 'jkt', message: 'required: the RFC 7638 thumbprint of the ES256 key that signs your holds' }],
      });
    return;
  }
  // On the buyer's own shard, where their turn's claim reads it (status.ts).
  await ctx.redis.set(buyerRoomKeys(ctx, eventId, actor.sub).deviceKey(actor.sub), jkt, 'EX', DEVICE_KEY_KEPT_SECONDS);
}

/** Longer than any wait in a room: a key recorded at the join is still there when the buyer's turn comes. */
const DEVICE_KEY_KEPT_SECONDS = 24 * 3600;
