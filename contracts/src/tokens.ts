import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { z } from 'zod';
import { ADMISSION_ALGORITHMS, ADMISSION_AUDIENCE, ADMISSION_ISSUER, AdmissionClaims } from './admission';
import { type JwtOptions, verifyJwt } from './jwt';

/**
 * Identity tokens (buyers, promoters, operators) come from another party's clock: the algorithms
 * accepted and the skew allowed, the same in every service. Admission tokens are the platform's
 * own and short-lived: no skew is added to them.
 */
export const IDENTITY_ALGORITHMS = ['RS256', 'EdDSA', 'ES256'];
export const CLOCK_TOLERANCE_SECONDS = 30;

export const PROMOTER_ROLES = ['viewer', 'manager', 'owner'] as const;
export type PromoterRole = (typeof PROMOTER_ROLES)[number];

/**
 * The claims every service reads from an identity token: its subject, and for a staff account a tenant and a role
 * (a promoter's) or the operator role. The subject keys a buyer's orders, holds and revocations, so it is printable
 * text of a bounded length: PostgreSQL cannot store a NUL, and a control character has no place in a key or a log.
 */
export const IdentityClaims = z.object({
  sub: z
    .string()
    .min(1)
    .max(255)
    .regex(/^\P{Cc}+$/u, 'must not contain control characters'),
  tenantId: z.uuid().optional(),
  role: z.enum([...PROMOTER_ROLES, 'operator']).optional(),
});
export type IdentityClaims = z.infer<typeof IdentityClaims>;

/** A promoter's or an operator's account, which buys nothing: the shop, the waiting room and the cells refuse it. */
export const isStaffAccount = (claims: Pick<IdentityClaims, 'tenantId' | 'role'>) =>
  claims.tenantId !== undefined || claims.role !== undefined;
export const STAFF_NOT_BUYER = "this is a promoter's or an operator's account, not a buyer's";

/**
 * What a token check can say. `keys_unavailable` is no verdict on the token: the keys could not
 * be fetched, so the caller answers 503 and the buyer retries, rather than refusing a good token.
 */
export type TokenVerdict<T> = { ok: true; claims: T } | { ok: false; reason: 'invalid' | 'keys_unavailable' };

/** How long a key set may serve past its refresh while its endpoint fails: longer than any outage a sale rides out. */
export const STALE_KEYS_MS = 3_600_000;

/** How long a check waits for its key set's refetch before it verifies with the last set fetched. */
export const KEYS_REFETCH_WAIT_MS = 250;

/**
 * A JWKS fetched and cached the same way by every service: a key dropped from it stops working after `cacheMs`.
 * A check that finds the set past that age waits for its refetch only briefly (`KEYS_REFETCH_WAIT_MS`), then verifies
 * with the last set fetched while the fetch goes on: a key endpoint that hangs rather than refusing (a control plane
 * frozen, a network dropping packets) must not hold every check for the fetch's whole time-out, and an endpoint that
 * keeps failing is asked again at most once a second. While the endpoint cannot be reached (the control plane's
 * database or Redis lost, its API down), the last key set fetched keeps verifying for up to `staleMs`: the publisher
 * being away says nothing about the tokens it signed, and admitted buyers must finish their purchases in the cells
 * without it (the brief: the control plane is not on a hold's path). The price: a key withdrawn in those minutes is
 * honoured until the endpoint answers again. A key the last set lacks (a rotation) is always asked of the endpoint.
 */
export function remoteKeys(url: string, cacheMs: number, staleMs = STALE_KEYS_MS): JWTVerifyGetKey {
  const remote = createRemoteJWKSet(new URL(url), {
    cacheMaxAge: cacheMs,
    cooldownDuration: Math.min(30_000, cacheMs),
  });
  let lastGood: { at: number; set: JSONWebKeySet; keys: JWTVerifyGetKey } | null = null;
  const fetched = () => {
    const set = remote.jwks();
    if (set && set !== lastGood?.set) lastGood = { at: Date.now(), set, keys: createLocalJWKSet(set) };
    else if (lastGood) lastGood.at = Date.now();
  };
  const usable = (known: typeof lastGood): known is NonNullable<typeof lastGood> =>
    known !== null && Date.now() - known.at <= staleMs;
  const retryMs = Math.min(1_000, cacheMs);
  let askedAt = 0;
  /** The refetch under way, or a new one unless the endpoint failed within retryMs; settles when it does. */
  const refetch = (): Promise<void> => {
    if (!remote.reloading && Date.now() - askedAt < retryMs) return Promise.resolve();
    askedAt = Date.now();
    return remote.reload().then(fetched, () => {});
  };
  return async (header, token) => {
    if (!remote.fresh && usable(lastGood)) {
      await settledWithin(refetch(), KEYS_REFETCH_WAIT_MS);
      if (!remote.fresh) {
        try {
          return await lastGood.keys(header, token);
        } catch (err) {
          if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
        }
      }
    }
    try {
      const key = await remote(header, token);
      fetched();
      return key;
    } catch (err) {
      if (!keysProblem(err) || !usable(lastGood)) throw err;
      return lastGood.keys(header, token);
    }
  };
}

/** Resolves when `work` settles or after `ms`, whichever is first. */
function settledWithin(work: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    work.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * A specific JOSE error is a verdict on the token. A fetch failure, a JWKS time-out, an unusable JWKS or a non-200
 * from the key endpoint (jose's generic error) says nothing about the token.
 */
function keysProblem(err: unknown): boolean {
  if (!(err instanceof errors.JOSEError)) return true;
  return err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || err.code === 'ERR_JOSE_GENERIC';
}

/**
 * Tokens already verified, by their exact text (never by jti alone: a forged token may copy a jti), until
 * the token's exp or `maxAgeMs` after its check, whichever comes first. `maxAgeMs` is the JWKS cache age,
 * so a token whose key left the JWKS is refused at most one cache age after its last full check. Only the
 * signature/claims verdict is kept: revocation and per-request checks (buyer, event, cell) still run on
 * every request. A buyer's poll or hold retry then costs a map lookup instead of a signature check, the
 * largest single cost of those requests in the profile.
 */
export class VerifiedTokens<T> {
  readonly #entries = new Map<string, { claims: T; untilMs: number }>();

  constructor(private readonly o: { maxAgeMs: number; maxEntries?: number }) {}

  get(token: string, nowMs: number): T | undefined {
    const hit = this.#entries.get(token);
    if (!hit) return undefined;
    if (nowMs < hit.untilMs) return hit.claims;
    this.#entries.delete(token);
    return undefined;
  }

  /** Remembers a verified token; `exp` is its claim (unix seconds), if it has one. */
  set(token: string, claims: T, exp: number | undefined, nowMs: number): void {
    const untilMs = Math.min(nowMs + this.o.maxAgeMs, exp === undefined ? Number.POSITIVE_INFINITY : exp * 1000);
    if (untilMs <= nowMs) return;
    // Oldest first out: the map iterates in insertion order.
    if (this.#entries.size >= (this.o.maxEntries ?? 50_000)) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(token, { claims, untilMs });
  }
}

/**
 * Verifies a JWT against `keys` and parses its claims; a claim that does not parse makes the token invalid. The
 * cache judges freshness by the same clock as the claims (`currentDate`, else now).
 */
export async function verifyToken<T>(
  token: string,
  keys: JWTVerifyGetKey,
  options: JwtOptions,
  parse: (payload: JWTPayload) => T | undefined,
  cache?: VerifiedTokens<T>,
): Promise<TokenVerdict<T>> {
  const now = options.currentDate?.getTime() ?? Date.now();
  const hit = cache?.get(token, now);
  if (hit !== undefined) return { ok: true, claims: hit };
  try {
    const payload = await verifyJwt(token, keys, options);
    const claims = parse(payload);
    if (claims === undefined) return { ok: false, reason: 'invalid' };
    cache?.set(token, claims, payload.exp, now);
    return { ok: true, claims };
  } catch (err) {
    return { ok: false, reason: keysProblem(err) ? 'keys_unavailable' : 'invalid' };
  }
}

/**
 * The one admission-token check, used by the router (signature, audience, issuer, expiry, shape)
 * and by the cell, which then also checks the buyer, the event, its own id and revocations.
 */
export function createAdmissionVerifier(jwksUrl: string, cacheMs: number) {
  const keys = remoteKeys(jwksUrl, cacheMs);
  const verified = new VerifiedTokens<AdmissionClaims>({ maxAgeMs: cacheMs });
  return (token: string) =>
    verifyToken(
      token,
      keys,
      { issuer: ADMISSION_ISSUER, audience: ADMISSION_AUDIENCE, algorithms: ADMISSION_ALGORITHMS },
      (payload) => AdmissionClaims.safeParse(payload).data,
      verified,
    );
}
export type VerifyAdmission = ReturnType<typeof createAdmissionVerifier>;
