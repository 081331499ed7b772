import {
  type AdmissionClaims,
  CLOCK_TOLERANCE_SECONDS,
  checkDpopProof,
  createAdmissionVerifier,
  DPOP_JTI_TTL_SECONDS,
  type DpopRefusal,
  IDENTITY_ALGORITHMS,
  IdentityClaims,
  isStaffAccount,
  metrics,
  type RevocationNotice,
  type RevocationNoticeAnswer,
  remoteKeys,
  revocationKeys,
  STAFF_NOT_BUYER,
  VerifiedTokens,
  verifyToken,
} from '@onsale/contracts';
import type { Redis } from 'ioredis';
import type { JWTPayload } from 'jose';
import { z } from 'zod';
import { DomainError } from '../errors';

export interface IdentityConfig {
  cellId: string;
  identityJwksUrl: string;
  identityIssuer: string;
  identityAudience: string;
  admissionJwksUrl: string;
  /** How long a fetched JWKS is trusted: a key dropped from the JWKS stops working after this. */
  jwksCacheMs: number;
}

export interface Buyer {
  userId: string;
  /** The token's `email` claim when it is an address its issuer has not said is unverified: where the order's notices go. */
  email?: string;
}

const Email = z.email().max(254);

/**
 * A buyer's identity from their token's claims: its subject, and the address notices go to when it carries one; a
 * staff account's token is marked, to be refused as a buyer's.
 */
function buyerFromClaims(payload: JWTPayload): (Buyer & { staff: boolean }) | undefined {
  const claims = IdentityClaims.safeParse(payload).data;
  if (!claims) return undefined;
  const email = payload.email_verified === false ? undefined : Email.safeParse(payload.email).data;
  return { userId: claims.sub, ...(email && { email }), staff: isStaffAccount(claims) };
}

/**
 * Verifies buyer JWTs and admission tokens locally, against cached JWKS: the control plane
 * is not on the hot path of a hold. Revocations are read from Redis; if Redis cannot answer,
 * admission pauses (fails closed) rather than letting a revoked token through.
 */
export function createVerifiers(config: IdentityConfig, redis: Redis) {
  const identityKeys = remoteKeys(config.identityJwksUrl, config.jwksCacheMs);
  const verifiedBuyers = new VerifiedTokens<Buyer & { staff: boolean }>({ maxAgeMs: config.jwksCacheMs });
  const verifyAdmission = createAdmissionVerifier(config.admissionJwksUrl, config.jwksCacheMs);
  const keysUnavailable = () => new DomainError('cell_unavailable', 'token checks are unavailable; retry shortly');

  async function buyer(authorization: string | undefined): Promise<Buyer> {
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
    if (!token) throw new DomainError('unauthenticated', 'a buyer token is required');
    const verdict = await verifyToken(
      token,
      identityKeys,
      {
        issuer: config.identityIssuer,
        audience: config.identityAudience,
        algorithms: IDENTITY_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      },
      buyerFromClaims,
      verifiedBuyers,
    );
    if (verdict.ok) {
      const { staff, ...buyer } = verdict.claims;
      if (staff) throw new DomainError('forbidden', STAFF_NOT_BUYER);
      return buyer;
    }
    if (verdict.reason === 'keys_unavailable') throw keysUnavailable();
    throw new DomainError('unauthenticated', 'the buyer token is not valid');
  }

  /**
   * The admission token of a request, and with a device-bound one (cnf.jkt) the DPoP proof that the request comes
   * from the key's holder (`request`): its jti is taken in this cell's Redis, once, in the same round trip as the
   * revocation read.
   */
  async function admission(
    token: string | undefined,
    expected: { userId: string; eventId: string },
    request: { dpop: string | undefined; method: string; path: string },
  ) {
    if (!token)
      throw new DomainError('admission_invalid', 'an admission token is required', { header: 'X-Admission-Token' });
    const verdict = await verifyAdmission(token);
    if (!verdict.ok && verdict.reason === 'keys_unavailable') throw keysUnavailable();
    if (!verdict.ok)
      throw new DomainError('admission_invalid', 'the admission token is not valid', { reason: 'signature_or_expiry' });
    const claims: AdmissionClaims = verdict.claims;
    const mismatch =
      claims.sub !== expected.userId
        ? 'user'
        : claims.eventId !== expected.eventId
          ? 'event'
          : claims.purchaseCell !== config.cellId
            ? 'cell'
            : null;
    if (mismatch)
      throw new DomainError('admission_invalid', `the admission token is for another ${mismatch}`, {
        reason: mismatch,
      });

    const proof = claims.cnf ? proofOfPossession(token, claims.cnf.jkt, request) : null;

    let revoked: (string | null)[];
    let firstUse: boolean;
    try {
      [revoked, firstUse] = await Promise.all([
        redis.mget(revocationKeys.jti(claims.jti), revocationKeys.buyer(claims.sub)),
        // A proof is good for one request: its jti is taken for as long as its iat would let it pass.
        proof
          ? redis.set(dpopJtiKey(proof.jkt, proof.jti), '1', 'EX', DPOP_JTI_TTL_SECONDS, 'NX').then((r) => r !== null)
          : true,
      ]);
    } catch {
      throw new DomainError('cell_unavailable', 'admission checks are unavailable; retry shortly');
    }
    if (revoked.some((v) => v !== null)) {
      throw new DomainError('admission_invalid', 'the admission token was revoked', { reason: 'revoked' });
    }
    if (!firstUse) throw possessionUnproven('dpop_replayed');
    if (proof) metrics.dpopProofs.inc({ outcome: 'accepted' });
    return claims;
  }

  function proofOfPossession(
    token: string,
    jkt: string,
    request: { dpop: string | undefined; method: string; path: string },
  ) {
    const verdict = checkDpopProof(request.dpop, {
      jkt,
      accessToken: token,
      method: request.method,
      path: request.path,
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    if (!verdict.ok) throw possessionUnproven(verdict.reason);
    return { jkt, jti: verdict.jti };
  }

  /**
   * Enforces a revocation the control plane delivered (this cell's Redis is its own, not the control plane's) until
   * the tokens it covers have expired. A failure is a 503: the control plane retries until it is delivered.
   */
  async function recordRevocation(notice: RevocationNotice, nowSeconds: number): Promise<RevocationNoticeAnswer> {
    const key = notice.jti ? revocationKeys.jti(notice.jti) : revocationKeys.buyer(notice.sub as string);
    const ttlSeconds = Math.max(0, notice.expiresAt - nowSeconds);
    if (ttlSeconds === 0) return { key, ttlSeconds };
    try {
      await redis.set(key, String(notice.revokedAt), 'EX', ttlSeconds);
    } catch {
      throw new DomainError('cell_unavailable', 'revocations cannot be recorded; retry shortly');
    }
    return { key, ttlSeconds };
  }

  return { buyer, admission, recordRevocation };
}
export type Verifiers = ReturnType<typeof createVerifiers>;

/** A proof's jti, per key (a client picks its jtis: one cannot spend another's), kept until the proof is too old anyway. */
const dpopJtiKey = (jkt: string, jti: string) => `dpop:jti:${jkt}:${jti}`;

function possessionUnproven(reason: DpopRefusal) {
  metrics.dpopProofs.inc({ outcome: reason });
  return new DomainError(
    'admission_invalid',
    "the request does not prove possession of the admission token's device key (DPoP)",
    { reason, header: 'DPoP' },
  );
}
