import {
  ADMISSION_ALG,
  ADMISSION_AUDIENCE,
  ADMISSION_ISSUER,
  AdmissionClaims,
  revocationKeys,
} from '@onsale/contracts';
import type { Redis } from 'ioredis';
import { createRemoteJWKSet, jwtVerify } from 'jose';
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
}

/**
 * Verifies buyer JWTs and admission tokens locally, against cached JWKS: the control plane
 * is not on the hot path of a hold. Revocations are read from Redis; if Redis cannot answer,
 * admission pauses (fails closed) rather than letting a revoked token through.
 */
export function createVerifiers(config: IdentityConfig, redis: Redis) {
  const jwksOptions = { cacheMaxAge: config.jwksCacheMs, cooldownDuration: Math.min(30_000, config.jwksCacheMs) };
  const identityKeys = createRemoteJWKSet(new URL(config.identityJwksUrl), jwksOptions);
  const admissionKeys = createRemoteJWKSet(new URL(config.admissionJwksUrl), jwksOptions);

  async function buyer(authorization: string | undefined): Promise<Buyer> {
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
    if (!token) throw new DomainError('unauthenticated', 'a buyer token is required');
    try {
      const { payload } = await jwtVerify(token, identityKeys, {
        issuer: config.identityIssuer,
        audience: config.identityAudience,
      });
      if (!payload.sub) throw new Error('no subject');
      return { userId: payload.sub };
    } catch {
      throw new DomainError('unauthenticated', 'the buyer token is not valid');
    }
  }

  async function admission(token: string | undefined, expected: { userId: string; eventId: string }) {
    if (!token)
      throw new DomainError('admission_invalid', 'an admission token is required', { header: 'X-Admission-Token' });
    let claims: AdmissionClaims;
    try {
      const { payload } = await jwtVerify(token, admissionKeys, {
        issuer: ADMISSION_ISSUER,
        audience: ADMISSION_AUDIENCE,
        algorithms: [ADMISSION_ALG],
      });
      claims = AdmissionClaims.parse(payload);
    } catch {
      throw new DomainError('admission_invalid', 'the admission token is not valid', { reason: 'signature_or_expiry' });
    }
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

    let revoked: (string | null)[];
    try {
      revoked = await redis.mget(revocationKeys.jti(claims.jti), revocationKeys.buyer(claims.sub));
    } catch {
      throw new DomainError('cell_unavailable', 'admission checks are unavailable; retry shortly');
    }
    if (revoked.some((v) => v !== null)) {
      throw new DomainError('admission_invalid', 'the admission token was revoked', { reason: 'revoked' });
    }
    return claims;
  }

  return { buyer, admission };
}
export type Verifiers = ReturnType<typeof createVerifiers>;
