import { createHash } from 'node:crypto';
import { createLocalJWKSet, importJWK, type JSONWebKeySet, type JWK, jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';

/** A cell's ticket-signing key, as a private Ed25519 JWK with its kid. */
export const TicketSigningJwk = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string(),
  d: z.string(),
  kid: z.string().min(1),
});

/** What a ticket says (the claims the cell signs and a gate scanner reads back). */
export const TicketClaims = z.object({
  tid: z.string(),
  orderId: z.string(),
  eventId: z.string(),
  /** A reserved seat's ticket names the seat... */
  seatId: z.string().optional(),
  seat: z.object({ label: z.string(), section: z.string(), row: z.string() }).optional(),
  /** ...a general-admission ticket its area and unit number (its place in the area's issued sequence). */
  ga: z.object({ areaId: z.string(), area: z.string(), unit: z.number().int() }).optional(),
  cell: z.string(),
});
export type TicketClaims = z.infer<typeof TicketClaims>;

/** Stable per (order, seat): a retried issue finds the same id and the unique index does the rest. */
export const ticketIdFor = (orderId: string, seatId: string) =>
  `tkt_${createHash('sha256').update(`${orderId}:${seatId}`).digest('hex').slice(0, 26)}`;

export async function ticketSigner(jwkJson: string) {
  const jwk = TicketSigningJwk.parse(JSON.parse(jwkJson));
  const key = await importJWK({ ...jwk, alg: 'EdDSA' }, 'EdDSA');
  return (claims: TicketClaims) =>
    new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'EdDSA', kid: jwk.kid, typ: 'ticket+jwt' })
      .setIssuer(`onsale:cell:${claims.cell}`)
      .setSubject(claims.tid)
      .setIssuedAt()
      .sign(key);
}
export type TicketSigner = Awaited<ReturnType<typeof ticketSigner>>;

/**
 * The tickets of an event that no longer admit anyone, as of `iat`. Signed with the ticket key, so a
 * scanner trusts it exactly as far as it trusts the tickets: a list edited in transit (a voided
 * ticket taken off it) fails verification.
 */
export const VoidListClaims = z.object({ eventId: z.string(), cell: z.string(), voided: z.array(z.string()) });
export type VoidListClaims = z.infer<typeof VoidListClaims>;
export const VOID_LIST_TYP = 'ticket-voids+jwt';

export async function voidListSigner(jwkJson: string) {
  const jwk = TicketSigningJwk.parse(JSON.parse(jwkJson));
  const key = await importJWK({ ...jwk, alg: 'EdDSA' }, 'EdDSA');
  return (claims: VoidListClaims) =>
    new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'EdDSA', kid: jwk.kid, typ: VOID_LIST_TYP })
      .setIssuer(`onsale:cell:${claims.cell}`)
      .setSubject(claims.eventId)
      .setIssuedAt()
      .sign(key);
}
export type VoidListSigner = Awaited<ReturnType<typeof voidListSigner>>;

/** The public half, as the gate scanners download it (GET /.well-known/ticket-keys.json). */
export function publicTicketJwks(jwkJson: string): { keys: JWK[] } {
  const { d: _private, ...pub } = TicketSigningJwk.parse(JSON.parse(jwkJson));
  return { keys: [{ ...pub, alg: 'EdDSA', use: 'sig' }] };
}

/**
 * The scanner's check against a published key set (several keys while one rotates): EdDSA only, the
 * ticket type, and an issuer that names the cell the claims name.
 */
export async function verifyTicketWithKeys(token: string, jwks: JSONWebKeySet): Promise<TicketClaims> {
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { typ: 'ticket+jwt', algorithms: ['EdDSA'] });
  const parsed = TicketClaims.safeParse(payload);
  if (!parsed.success)
    throw new Error(`the claims are not a ticket's (${parsed.error.issues.map((i) => i.path.join('.')).join(', ')})`);
  const claims = parsed.data;
  if (payload.iss !== `onsale:cell:${claims.cell}`) throw new Error('issuer does not match the ticket cell');
  return claims;
}

export async function verifyVoidList(token: string, jwks: JSONWebKeySet): Promise<VoidListClaims & { iat: number }> {
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { typ: VOID_LIST_TYP, algorithms: ['EdDSA'] });
  const list = VoidListClaims.extend({ iat: z.number() }).parse(payload);
  if (payload.iss !== `onsale:cell:${list.cell}`) throw new Error('issuer does not match the void list cell');
  return list;
}
