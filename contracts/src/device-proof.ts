/**
 * The buyer's side of the door's two defences, in WebCrypto only (no Node module, no dependency): a buyer's page
 * imports this file as it is, and the tests and load tests run the very same code under Node.
 *
 * Proof of work (POST /events/{eventId}/queue/challenge, then the join's `pow`): find a counter, a non-negative
 * integer written in decimal, such that SHA-256(UTF-8 of `${challenge}:${counter}`) starts with at least
 * `difficulty` zero bits.
 *
 * Device binding (RFC 9449, DPoP): the client keeps an ES256 key pair for the whole onsale (its private half not
 * extractable), sends the key's thumbprint when it joins, and signs one proof per hold request:
 *   header  { typ: "dpop+jwt", alg: "ES256", jwk: <the public key: kty, crv, x, y> }
 *   payload { htm: <method>, htu: <the request URL without query>, iat: <unix seconds>, jti: <unique>,
 *             ath: base64url(SHA-256(admission token)) }
 * sent as the `DPoP` header beside `X-Admission-Token`. A proof is good for one request (its jti is remembered) and
 * for DPOP_PROOF_MAX_AGE_SECONDS; a retry signs a new one.
 */

const encoder = new TextEncoder();

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

const sha256 = async (text: string) => new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));

/** Zero bits at the start of a hash: what a proof of work is measured in. */
export function leadingZeroBits(hash: Uint8Array): number {
  let bits = 0;
  for (const byte of hash) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

/** The bytes a proof of work hashes, the same on both sides. */
export const powInput = (challenge: string, counter: number) => `${challenge}:${counter}`;

/**
 * Finds the first counter whose hash meets `difficulty`: 2^difficulty hashes on average. A page calls it off the
 * main thread (a Worker) for difficulties above ~16, or the page stalls.
 */
export async function solveChallenge(challenge: string, difficulty: number): Promise<number> {
  for (let counter = 0; ; counter++)
    if (leadingZeroBits(await sha256(powInput(challenge, counter))) >= difficulty) return counter;
}

export interface DeviceKey {
  privateKey: CryptoKey;
  /** The public key as it goes in every proof's header. */
  jwk: { kty: 'EC'; crv: 'P-256'; x: string; y: string };
  /** Its RFC 7638 thumbprint: what the join sends and the admission token's cnf.jkt carries. */
  jkt: string;
}

/** RFC 7638: SHA-256 of the required members, in lexicographic order, with no whitespace. */
export const thumbprintOf = async (jwk: DeviceKey['jwk']) =>
  base64url(await sha256(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })));

export async function createDeviceKey(): Promise<DeviceKey> {
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const full = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const jwk = { kty: 'EC' as const, crv: 'P-256' as const, x: full.x as string, y: full.y as string };
  return { privateKey: pair.privateKey, jwk, jkt: await thumbprintOf(jwk) };
}

/** A DPoP proof for one request carrying `accessToken` (the admission token). */
export async function dpopProof(
  key: DeviceKey,
  request: { method: string; url: string; accessToken: string; iat?: number; jti?: string },
): Promise<string> {
  const url = new URL(request.url);
  const header = { typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk };
  const payload = {
    htm: request.method.toUpperCase(),
    htu: `${url.origin}${url.pathname}`,
    iat: request.iat ?? Math.floor(Date.now() / 1000),
    jti: request.jti ?? crypto.randomUUID(),
    ath: base64url(await sha256(request.accessToken)),
  };
  const signingInput = `${base64url(encoder.encode(JSON.stringify(header)))}.${base64url(encoder.encode(JSON.stringify(payload)))}`;
  const signature = await crypto.subtle.sign(
    { name: 'ECDSA', hash: 'SHA-256' },
    key.privateKey,
    encoder.encode(signingInput),
  );
  return `${signingInput}.${base64url(new Uint8Array(signature))}`;
}
