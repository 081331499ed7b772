import { createHash, createPublicKey, type KeyObject, verify } from 'node:crypto';

/**
 * The server's check of a DPoP proof (RFC 9449) against an admission token bound to a key (`cnf.jkt`), done the same
 * way by the router and by the cell; the proof's format is in device-proof.ts. Only ES256 proofs are accepted: the
 * one algorithm every browser's WebCrypto signs, and one that verifies on the calling thread in node:crypto.
 */
export const DPOP_HEADER = 'dpop';
/** How old (by its iat) a proof may be; a proof from up to DPOP_CLOCK_SKEW_SECONDS in the future is accepted too. */
export const DPOP_PROOF_MAX_AGE_SECONDS = 60;
export const DPOP_CLOCK_SKEW_SECONDS = 5;
/** How long a proof's jti is remembered: past this, its iat refuses it anyway. */
export const DPOP_JTI_TTL_SECONDS = DPOP_PROOF_MAX_AGE_SECONDS + DPOP_CLOCK_SKEW_SECONDS;

/** Why a proof was refused: the error's details.reason, so a client can tell a stale clock from a copied token. */
export type DpopRefusal =
  | 'dpop_missing'
  | 'dpop_malformed'
  | 'dpop_key_mismatch'
  | 'dpop_signature'
  | 'dpop_method'
  | 'dpop_url'
  | 'dpop_stale'
  | 'dpop_token_hash'
  | 'dpop_replayed';

export type DpopVerdict = { ok: true; jti: string } | { ok: false; reason: DpopRefusal };

export interface DpopExpectation {
  /** The admission token's cnf.jkt. */
  jkt: string;
  /** The admission token the proof must name (its ath). */
  accessToken: string;
  method: string;
  path: string;
  /** The authority the client addressed (its Host header); unchecked when absent (the cell, behind the router). */
  host?: string;
  nowSeconds: number;
}

const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

const b64urlSha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/** RFC 7638 thumbprint of a P-256 public JWK. */
export const ecThumbprint = (jwk: { crv: string; kty: string; x: string; y: string }) =>
  b64urlSha256(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }));

/** Hash of the admission token a proof names (its ath claim). */
export const accessTokenHash = b64urlSha256;

function parseJson(segment: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Public keys by thumbprint: a buyer signs every hold with one key, and importing it costs about as much as the
 * signature check. Bounded; the oldest goes first.
 */
const keysByThumbprint = new Map<string, KeyObject>();
const MAX_KEYS = 20_000;

function publicKeyFor(jkt: string, jwk: { crv: string; kty: string; x: string; y: string }): KeyObject | undefined {
  let key = keysByThumbprint.get(jkt);
  if (key) return key;
  try {
    key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' });
  } catch {
    return undefined;
  }
  if (keysByThumbprint.size >= MAX_KEYS) keysByThumbprint.delete(keysByThumbprint.keys().next().value as string);
  keysByThumbprint.set(jkt, key);
  return key;
}

/**
 * Everything about a proof but replay, cheapest first: the key it names must be the token's (a copied token fails
 * here, before any signature work), then the signature, then the request it was made for, its age and its token.
 * The caller then records the jti (checkDpopProof's `jti`) where it remembers proofs.
 */
export function checkDpopProof(proof: string | undefined, e: DpopExpectation): DpopVerdict {
  if (!proof) return { ok: false, reason: 'dpop_missing' };
  if (!COMPACT.test(proof)) return { ok: false, reason: 'dpop_malformed' };
  const [h, p, s] = proof.split('.') as [string, string, string];
  const header = parseJson(h);
  const claims = parseJson(p);
  const jwk = header?.jwk as Record<string, unknown> | undefined;
  if (
    !header ||
    !claims ||
    header.typ !== 'dpop+jwt' ||
    header.alg !== 'ES256' ||
    typeof jwk !== 'object' ||
    jwk === null ||
    jwk.kty !== 'EC' ||
    jwk.crv !== 'P-256' ||
    typeof jwk.x !== 'string' ||
    typeof jwk.y !== 'string' ||
    jwk.d !== undefined ||
    typeof claims.htm !== 'string' ||
    typeof claims.htu !== 'string' ||
    typeof claims.iat !== 'number' ||
    typeof claims.jti !== 'string' ||
    claims.jti.length < 8 ||
    claims.jti.length > 128 ||
    typeof claims.ath !== 'string'
  )
    return { ok: false, reason: 'dpop_malformed' };
  const publicJwk = jwk as { kty: string; crv: string; x: string; y: string };
  const jkt = ecThumbprint(publicJwk);
  if (jkt !== e.jkt) return { ok: false, reason: 'dpop_key_mismatch' };
  const key = publicKeyFor(jkt, publicJwk);
  if (
    !key ||
    !verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))
  )
    return { ok: false, reason: 'dpop_signature' };
  if (claims.htm !== e.method) return { ok: false, reason: 'dpop_method' };
  let htu: URL;
  try {
    htu = new URL(claims.htu);
  } catch {
    return { ok: false, reason: 'dpop_url' };
  }
  // The scheme is not compared: TLS may end at a load balancer in front of the router.
  if (htu.pathname !== e.path || (e.host !== undefined && htu.host !== e.host.toLowerCase()))
    return { ok: false, reason: 'dpop_url' };
  if (claims.iat < e.nowSeconds - DPOP_PROOF_MAX_AGE_SECONDS || claims.iat > e.nowSeconds + DPOP_CLOCK_SKEW_SECONDS)
    return { ok: false, reason: 'dpop_stale' };
  if (claims.ath !== accessTokenHash(e.accessToken)) return { ok: false, reason: 'dpop_token_hash' };
  return { ok: true, jti: claims.jti };
}

/**
 * The router's memory of proofs already used, first line against a replayed proof: bounded (the oldest is forgotten
 * first, so under a flood of more than `maxEntries` proofs a minute a replay can slip past it) and per process. The
 * cell's check, on its Redis, is the one that holds.
 */
export class RecentProofs {
  readonly #until = new Map<string, number>();

  constructor(private readonly maxEntries = 200_000) {}

  /** True the first time a proof (its key's thumbprint and jti) is seen within its TTL; false for a replay. */
  firstUse(proof: string, nowSeconds: number): boolean {
    const until = this.#until.get(proof);
    if (until !== undefined && until > nowSeconds) return false;
    if (until !== undefined) this.#until.delete(proof);
    if (this.#until.size >= this.maxEntries) this.#until.delete(this.#until.keys().next().value as string);
    this.#until.set(proof, nowSeconds + DPOP_JTI_TTL_SECONDS);
    return true;
  }
}
