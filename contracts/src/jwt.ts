import { createPublicKey, type JsonWebKey, KeyObject, verify } from 'node:crypto';
import { errors, type JWTPayload, type JWTVerifyGetKey } from 'jose';

/** What a token must say to pass: its issuer, an audience among its own, an accepted alg, and the clock. */
export interface JwtOptions {
  issuer: string;
  audience: string;
  algorithms: readonly string[];
  /** Seconds of skew allowed on nbf and exp. */
  clockTolerance?: number;
  currentDate?: Date;
}

const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const decoder = new TextDecoder('utf-8', { fatal: true });

/** How each accepted alg verifies, and the key it needs (RFC 7518 §3, RFC 8037). */
const ALGS: Record<string, { digest: string | null; key: (k: KeyObject) => boolean; dsa?: 'ieee-p1363' }> = {
  EdDSA: { digest: null, key: (k) => k.asymmetricKeyType === 'ed25519' || k.asymmetricKeyType === 'ed448' },
  RS256: {
    digest: 'sha256',
    key: (k) => k.asymmetricKeyType === 'rsa' && (k.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048,
  },
  ES256: {
    digest: 'sha256',
    key: (k) => k.asymmetricKeyType === 'ec' && k.asymmetricKeyDetails?.namedCurve === 'prime256v1',
    dsa: 'ieee-p1363',
  },
};

/** The KeyObject behind each CryptoKey the JWKS getter hands out (it hands out the same one until it refetches). */
const keyObjects = new WeakMap<object, KeyObject>();

function toKeyObject(key: unknown): KeyObject {
  if (key instanceof KeyObject) return key;
  if (key instanceof Uint8Array) throw new errors.JOSENotSupported('symmetric keys are not accepted');
  let found = keyObjects.get(key as object);
  if (!found) {
    found = key instanceof CryptoKey ? KeyObject.from(key) : createPublicKey({ key: key as JsonWebKey, format: 'jwk' });
    keyObjects.set(key as object, found);
  }
  return found;
}

function decodeJson(segment: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(Buffer.from(segment, 'base64url')));
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new errors.JWSInvalid(`the JWT ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * A compact JWT's signature and claims, checked with node:crypto on the calling thread.
 *
 * jose checks signatures through WebCrypto, which runs every check on libuv's thread pool: on the shared cores of a
 * cell, the router and the waiting room that hand-off wakes a thread that preempts the one serving requests, and
 * costs more CPU than the check itself (measured: 108 µs of CPU per async EdDSA check against 94 µs inline). Every
 * token the platform accepts is a compact JWS over a public key, so this does exactly that and nothing more:
 * jose still fetches and selects the keys (createRemoteJWKSet) and its error classes are thrown, and the claims are
 * validated as jose's jwtVerify validates them (iss, aud, nbf, exp with the clock tolerance; iat must be a number).
 * Anything outside that (an unlisted alg, `crit`, unencoded payloads, a symmetric key, a key of another type than
 * its alg) is refused.
 */
export async function verifyJwt(token: string, keys: JWTVerifyGetKey, o: JwtOptions): Promise<JWTPayload> {
  if (!COMPACT.test(token)) throw new errors.JWSInvalid('not a compact JWS');
  const [encodedHeader, encodedPayload, signature] = token.split('.') as [string, string, string];
  const header = decodeJson(encodedHeader, 'header');
  if (header.crit !== undefined || header.b64 !== undefined)
    throw new errors.JOSENotSupported('crit and b64 header parameters are not accepted');
  const alg = header.alg;
  const rule =
    typeof alg === 'string' && o.algorithms.includes(alg) && Object.hasOwn(ALGS, alg) ? ALGS[alg] : undefined;
  if (!rule) throw new errors.JOSEAlgNotAllowed('"alg" (Algorithm) Header Parameter value not allowed');

  const key = toKeyObject(
    await keys(header as Parameters<JWTVerifyGetKey>[0], {
      protected: encodedHeader,
      payload: encodedPayload,
      signature,
    }),
  );
  if (key.type !== 'public' || !rule.key(key)) throw new errors.JOSENotSupported(`the key does not fit ${alg}`);
  const signed = Buffer.from(`${encodedHeader}.${encodedPayload}`);
  const ok = verify(
    rule.digest,
    signed,
    rule.dsa ? { key, dsaEncoding: rule.dsa } : key,
    Buffer.from(signature, 'base64url'),
  );
  if (!ok) throw new errors.JWSSignatureVerificationFailed();

  const claims = decodeJson(encodedPayload, 'claims set') as JWTPayload;
  const fail = (claim: string, message: string) =>
    new errors.JWTClaimValidationFailed(message, claims, claim, 'check_failed');
  if (claims.iss !== o.issuer) throw fail('iss', 'unexpected "iss" claim value');
  const aud = claims.aud;
  if (!(aud === o.audience || (Array.isArray(aud) && aud.includes(o.audience))))
    throw fail('aud', 'unexpected "aud" claim value');
  for (const claim of ['iat', 'nbf', 'exp'] as const)
    if (claims[claim] !== undefined && typeof claims[claim] !== 'number')
      throw fail(claim, `"${claim}" claim must be a number`);
  const now = Math.floor((o.currentDate?.getTime() ?? Date.now()) / 1000);
  const tolerance = o.clockTolerance ?? 0;
  if (claims.nbf !== undefined && claims.nbf > now + tolerance) throw fail('nbf', '"nbf" claim timestamp check failed');
  if (claims.exp !== undefined && claims.exp <= now - tolerance)
    throw new errors.JWTExpired('"exp" claim timestamp check failed', claims, 'exp', 'check_failed');
  return claims;
}
