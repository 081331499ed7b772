import { createHash, createHmac, randomBytes } from 'node:crypto';
import { DomainError } from '@onsale/contracts';
import { eq } from 'drizzle-orm';
import { CompactSign } from 'jose';
import type { Services } from '../context';
import { onsales } from '../db/schema';
import { POST_OPEN_BASE } from './keys';
import { allShardKeys } from './shards';

/**
 * Verifiable fairness of the pre-opening shuffle (control-plane/README.md, "Verifiable fairness"; the published
 * checker is scripts/fairness-verify.ts). Every early arrival's place is fixed by a seed the platform committed
 * to (SHA-256) when it scheduled the onsale, and by the buyer's pseudonym; once the room opens, nobody can arrive
 * early any more, and the seed and a signed admission log are published so anyone can recompute the order.
 */
export const FAIRNESS_SCHEME = 'onsale-fairness/1';
/** The JWS `typ` of a signed admission log: not an admission token, whatever a verifier of those is handed. */
export const FAIRNESS_LOG_TYP = 'onsale-fairness-log+json';

export interface FairnessSecrets {
  /** hex of 32 random bytes: orders the early arrivals; published once the room opens. */
  seed: string;
  /** hex of 32 random bytes: pseudonymizes buyers; never published. */
  salt: string;
}

export const newFairnessSecrets = (): FairnessSecrets => ({
  seed: randomBytes(32).toString('hex'),
  salt: randomBytes(32).toString('hex'),
});

/** SHA-256 of the seed's bytes, hex: published from the moment the onsale is scheduled. */
export const commitmentOf = (seed: string) => createHash('sha256').update(Buffer.from(seed, 'hex')).digest('hex');

/** HMAC-SHA256(salt, buyer id), hex: the buyer's name in the published log (GET queue/me tells each buyer theirs). */
export const pseudonymOf = (salt: string, buyer: string) =>
  createHmac('sha256', Buffer.from(salt, 'hex')).update(buyer, 'utf8').digest('hex');

/** The first 52 bits of HMAC-SHA256(seed, pseudonym) as an integer: the early arrival's queue score. */
export const shuffleKey = (seed: string, pseudonym: string) =>
  Number.parseInt(
    createHmac('sha256', Buffer.from(seed, 'hex')).update(pseudonym, 'utf8').digest('hex').slice(0, 13),
    16,
  );

interface RoomFairness extends FairnessSecrets {
  commitment: string;
}

/** The shuffle seed is revealed once the room opens (its settings are on every shard; shard 0 is read). */
export async function seedRevealed(ctx: Services, eventId: string): Promise<boolean> {
  return (await ctx.redis.hget(allShardKeys(ctx, eventId)[0]!.meta, 'open')) === '1';
}

/**
 * The secrets of each event's room, read from the onsale record once per process: they never change for an
 * onsale, so a join costs no read. A join the room refuses as stale (the event's onsale was scheduled anew, or
 * scheduled since this process found none) forgets the entry and reads again; "none" is kept only briefly.
 */
const cache = new WeakMap<Services, Map<string, { f: RoomFairness | null; until: number }>>();
const NONE_KEPT_MS = 5000;

export async function roomFairness(ctx: Services, eventId: string): Promise<RoomFairness | null> {
  let byEvent = cache.get(ctx);
  if (!byEvent) {
    byEvent = new Map();
    cache.set(ctx, byEvent);
  }
  const now = ctx.clock.now().getTime();
  const hit = byEvent.get(eventId);
  if (hit && hit.until > now) return hit.f;
  const [row] = await ctx.db
    .select({ seed: onsales.fairnessSeed, salt: onsales.fairnessSalt })
    .from(onsales)
    .where(eq(onsales.eventId, eventId));
  const f = row ? { ...row, commitment: commitmentOf(row.seed) } : null;
  byEvent.set(eventId, { f, until: f ? Number.POSITIVE_INFINITY : now + NONE_KEPT_MS });
  return f;
}

export const forgetRoomFairness = (ctx: Services, eventId: string) => cache.get(ctx)?.delete(eventId);

export interface AdmissionLogEntry {
  pseudonym: string;
  /** 1-based place among the early arrivals, in the queue's order. */
  position: number;
  /** When the release step admitted this place (ISO), or null. */
  admittedAt: string | null;
  /** When the release step passed this place over for silence (ISO), or null. */
  skippedAt: string | null;
}

export interface FairnessRecord {
  scheme: typeof FAIRNESS_SCHEME;
  eventId: string;
  commitment: string;
  roomOpensAt: string;
  /** Whether the room has opened: from then on no arrival is early, and the seed and the log are published. */
  revealed: boolean;
  seed: string | null;
  /** Compact JWS (RS256, the admission signing key, `typ` FAIRNESS_LOG_TYP) whose payload is the SignedAdmissionLog. */
  log: string | null;
}

export interface SignedAdmissionLog {
  scheme: typeof FAIRNESS_SCHEME;
  eventId: string;
  commitment: string;
  seed: string;
  issuedAt: string;
  entries: AdmissionLogEntry[];
}

/**
 * The event's fairness record: the commitment from the moment the onsale is scheduled; once the room has
 * opened (Redis says so, and then no join can take a pre-opening place), also the seed and the admission log of
 * the early arrivals, signed now with the admission key (so it verifies against the JWKS published today).
 */
export async function fairnessRecord(ctx: Services, eventId: string): Promise<FairnessRecord> {
  const [row] = await ctx.db
    .select({ seed: onsales.fairnessSeed, salt: onsales.fairnessSalt, roomOpensAt: onsales.roomOpensAt })
    .from(onsales)
    .where(eq(onsales.eventId, eventId));
  if (!row) throw new DomainError('not_found', 'this event has no onsale scheduled');
  const shards = allShardKeys(ctx, eventId);
  const commitment = commitmentOf(row.seed);
  const base = {
    scheme: FAIRNESS_SCHEME,
    eventId,
    commitment,
    roomOpensAt: row.roomOpensAt.toISOString(),
  } as const;
  if (!(await seedRevealed(ctx, eventId))) return { ...base, revealed: false, seed: null, log: null };

  // Every shard's early arrivals: shuffle keys order them the same wherever they are kept.
  const perShard = await Promise.all(
    shards.map((k) =>
      Promise.all([
        ctx.redis.zrangebyscore(k.queue, '-inf', `(${POST_OPEN_BASE}`, 'WITHSCORES'),
        ctx.redis.hgetall(k.fairLog),
      ]),
    ),
  );
  const waiting = perShard.flatMap(([w]) => w);
  const taken = Object.assign({}, ...perShard.map(([, t]) => t)) as Record<string, string>;
  type Early = { buyer: string; key: number; admittedAt: number | null; skippedAt: number | null };
  const early: Early[] = [];
  for (let i = 0; i < waiting.length; i += 2)
    early.push({ buyer: waiting[i]!, key: Number(waiting[i + 1]), admittedAt: null, skippedAt: null });
  for (const [buyer, v] of Object.entries(taken)) {
    const [key, how, at] = v.split('|');
    early.push({
      buyer,
      key: Number(key),
      admittedAt: how === 'r' ? Number(at) : null,
      skippedAt: how === 's' ? Number(at) : null,
    });
  }
  // The queue's own order: by score, then (a tie) by member bytes, as a Redis sorted set orders them.
  early.sort((a, b) => a.key - b.key || Buffer.compare(Buffer.from(a.buyer), Buffer.from(b.buyer)));
  const signed: SignedAdmissionLog = {
    scheme: FAIRNESS_SCHEME,
    eventId,
    commitment,
    seed: row.seed,
    issuedAt: ctx.clock.now().toISOString(),
    entries: early.map((e, i) => ({
      pseudonym: pseudonymOf(row.salt, e.buyer),
      position: i + 1,
      admittedAt: e.admittedAt === null ? null : new Date(e.admittedAt).toISOString(),
      skippedAt: e.skippedAt === null ? null : new Date(e.skippedAt).toISOString(),
    })),
  };
  const { kid, alg, key } = await ctx.keys.signingKey();
  const log = await new CompactSign(new TextEncoder().encode(JSON.stringify(signed)))
    .setProtectedHeader({ alg, kid, typ: FAIRNESS_LOG_TYP })
    .sign(key);
  return { ...base, revealed: true, seed: row.seed, log };
}
