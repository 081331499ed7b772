import { randomUUID } from 'node:crypto';
import { ADMISSION_ALG, DomainError, metrics } from '@onsale/contracts';
import { and, desc, eq, gt, isNull, ne, or, sql } from 'drizzle-orm';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Db, DbOrTx } from '../db/client';
import { type SigningKey, signingKeys } from '../db/schema';
import type { Clock } from '../lib/clock';
import { openWithAny, seal } from './kek';

type PrivateKey = Awaited<ReturnType<typeof importJWK>>;

export interface KeyStoreOptions {
  db: Db;
  /** The key-encryption key that seals new keys and opens them. */
  kek: Buffer;
  /** KEKs it replaced, still able to open keys not yet sealed again (`reseal`); empty once a rotation is done. */
  previousKeks?: Buffer[];
  clock: Clock;
  tokenTtlSeconds: number;
  announceSeconds: number;
  rotationIntervalSeconds: number;
  /** How long a process trusts its cached key list (ms). */
  cacheMs?: number;
}

/**
 * Admission signing keys in the control-plane database. A new key is published in the JWKS
 * `announceSeconds` before it signs; the key it replaces stops signing at that moment and stays
 * published until its last token has expired.
 */
export class AdmissionKeyStore {
  private cached: { at: number; rows: SigningKey[] } | null = null;
  private privates = new Map<string, PrivateKey>();
  constructor(private readonly o: KeyStoreOptions) {}

  /** Runs `fn` in a transaction holding the key-management advisory lock (one rotation at a time across processes). */
  private locked<T>(fn: (tx: DbOrTx) => Promise<T>): Promise<T> {
    return this.o.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('control-plane:admission-keys'))`);
      return fn(tx);
    });
  }

  private async create(tx: DbOrTx, activatesAt: Date): Promise<SigningKey> {
    const now = this.o.clock.now();
    const { publicKey, privateKey } = await generateKeyPair(ADMISSION_ALG, { modulusLength: 2048, extractable: true });
    const kid = `adm_${now.toISOString().slice(0, 10).replaceAll('-', '')}_${randomUUID().slice(0, 8)}`;
    const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: ADMISSION_ALG, use: 'sig' };
    const privateJwk = await exportJWK(privateKey);
    const [row] = await tx
      .insert(signingKeys)
      .values({
        kid,
        alg: ADMISSION_ALG,
        publicJwk,
        privateKeyEnc: seal(this.o.kek, JSON.stringify(privateJwk), kid),
        createdAt: now,
        activatesAt,
      })
      .returning();
    this.cached = null;
    return row as SigningKey;
  }

  /** Keys still published (not past published_until), newest activation first. */
  async list(force = false): Promise<SigningKey[]> {
    const now = this.o.clock.now();
    const cacheMs = this.o.cacheMs ?? 5000;
    if (!force && this.cached && Math.abs(now.getTime() - this.cached.at) < cacheMs) return this.cached.rows;
    const rows = await this.o.db
      .select()
      .from(signingKeys)
      .where(or(isNull(signingKeys.publishedUntil), gt(signingKeys.publishedUntil, now)))
      .orderBy(desc(signingKeys.activatesAt));
    this.cached = { at: now.getTime(), rows };
    return rows;
  }

  /** The first key is active at once (nobody can have cached a JWKS yet). */
  async ensureKey(): Promise<void> {
    await this.locked(async (tx) => {
      const [any] = await tx.select({ kid: signingKeys.kid }).from(signingKeys).limit(1);
      if (!any) await this.create(tx, this.o.clock.now());
    });
    this.cached = null;
  }

  /** Announces a new key; it signs from now + announceSeconds, and the current one retires then. */
  async rotate(opts: { announceSeconds?: number } = {}): Promise<SigningKey> {
    return this.locked((tx) => this.rotateIn(tx, opts));
  }

  private async rotateIn(tx: DbOrTx, opts: { announceSeconds?: number } = {}): Promise<SigningKey> {
    const now = this.o.clock.now();
    const activatesAt = new Date(now.getTime() + (opts.announceSeconds ?? this.o.announceSeconds) * 1000);
    const next = await this.create(tx, activatesAt);
    const publishedUntil = new Date(activatesAt.getTime() + this.o.tokenTtlSeconds * 1000);
    await tx
      .update(signingKeys)
      .set({ retiredAt: activatesAt, publishedUntil })
      .where(and(isNull(signingKeys.retiredAt), ne(signingKeys.kid, next.kid)));
    this.cached = null;
    return next;
  }

  /** Rotates when the newest key is older than the rotation interval (minus the announce lead). */
  async rotateIfDue(): Promise<SigningKey | null> {
    return this.locked(async (tx) => {
      const [newest] = await tx.select().from(signingKeys).orderBy(desc(signingKeys.activatesAt)).limit(1);
      if (!newest) {
        await this.create(tx, this.o.clock.now());
        return null;
      }
      const due = newest.activatesAt.getTime() + (this.o.rotationIntervalSeconds - this.o.announceSeconds) * 1000;
      return this.o.clock.now().getTime() >= due ? this.rotateIn(tx) : null;
    });
  }

  /** The key that signs now: the most recently activated one that has not retired, with the alg its row names. */
  async signingKey(): Promise<{ kid: string; alg: string; key: PrivateKey }> {
    const now = this.o.clock.now().getTime();
    let rows = await this.list();
    let active = rows.find((k) => k.activatesAt.getTime() <= now && (!k.retiredAt || k.retiredAt.getTime() > now));
    if (!active) {
      rows = await this.list(true);
      active = rows.find((k) => k.activatesAt.getTime() <= now && (!k.retiredAt || k.retiredAt.getTime() > now));
    }
    if (!active) throw keyUnavailable('missing', 'no admission signing key is active');
    let key = this.privates.get(active.kid);
    if (!key) {
      const opened = openWithAny(this.keks, active.privateKeyEnc, active.kid);
      if (!opened)
        throw keyUnavailable(
          'sealed',
          `admission signing key ${active.kid} cannot be opened with SIGNING_KEY_KEK or SIGNING_KEY_KEK_PREVIOUS`,
        );
      key = await importJWK(JSON.parse(opened.plaintext) as JWK, active.alg);
      this.privates.set(active.kid, key);
    }
    return { kid: active.kid, alg: active.alg, key };
  }

  /**
   * Whether the key that signs now can be used, for a process to say at start which key is wrong. Never throws:
   * the process still serves what needs no signing (the directory, the console).
   */
  async check(): Promise<{ ok: true; kid: string } | { ok: false; message: string }> {
    try {
      return { ok: true, kid: (await this.signingKey()).kid };
    } catch (err) {
      return { ok: false, message: (err as Error).message };
    }
  }

  /**
   * The second half of a KEK rotation: every key row sealed under a previous KEK is sealed again under the
   * current one, in one transaction under the key lock. Rows no KEK opens are named, not touched.
   */
  async reseal(): Promise<{ resealed: string[]; current: number; unopenable: string[] }> {
    return this.locked(async (tx) => {
      const rows = await tx.select().from(signingKeys);
      const out = { resealed: [] as string[], current: 0, unopenable: [] as string[] };
      for (const row of rows) {
        const opened = openWithAny(this.keks, row.privateKeyEnc, row.kid);
        if (!opened) out.unopenable.push(row.kid);
        else if (opened.kekIndex === 0) out.current++;
        else {
          await tx
            .update(signingKeys)
            .set({ privateKeyEnc: seal(this.o.kek, opened.plaintext, row.kid) })
            .where(eq(signingKeys.kid, row.kid));
          out.resealed.push(row.kid);
        }
      }
      this.cached = null;
      return out;
    });
  }

  private get keks(): Buffer[] {
    return [this.o.kek, ...(this.o.previousKeks ?? [])];
  }

  /** The published key set: announced keys, the signing key and retired keys whose tokens may still be live. */
  async jwks(): Promise<{ keys: JWK[] }> {
    const now = this.o.clock.now().getTime();
    const rows = await this.list();
    return {
      keys: rows
        .filter((k) => k.createdAt.getTime() <= now && (!k.publishedUntil || k.publishedUntil.getTime() > now))
        .map((k) => k.publicJwk as JWK),
    };
  }
}

function keyUnavailable(reason: 'missing' | 'sealed', message: string): DomainError {
  metrics.signingKeyFailures.inc({ reason });
  return new DomainError('signing_key_unavailable', message);
}
