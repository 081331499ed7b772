import { randomUUID } from 'node:crypto';
import { ADMISSION_AUDIENCE, ADMISSION_ISSUER, type AdmissionClaims, metrics } from '@onsale/contracts';
import { SignJWT } from 'jose';
import type { AdmissionKeyStore } from './key-store';

export interface AdmissionGrant {
  sub: string;
  eventId: string;
  purchaseCell: string;
  directoryEpoch: number;
  iat: number;
  exp: number;
  jti?: string;
  /** The buyer's device key thumbprint: the token then works only with a DPoP proof by that key. */
  jkt?: string;
}

export const newJti = () => `adm_${randomUUID().replaceAll('-', '')}`;

/** Signs an admission token whose claims are exactly contracts' AdmissionClaims. */
export async function mintAdmissionToken(
  keys: AdmissionKeyStore,
  g: AdmissionGrant,
): Promise<{ token: string; claims: AdmissionClaims; kid: string }> {
  const { kid, alg, key } = await keys.signingKey();
  const claims: AdmissionClaims = {
    jti: g.jti ?? newJti(),
    sub: g.sub,
    eventId: g.eventId,
    purchaseCell: g.purchaseCell,
    directoryEpoch: g.directoryEpoch,
    iat: g.iat,
    exp: g.exp,
    aud: ADMISSION_AUDIENCE,
    iss: ADMISSION_ISSUER,
    ...(g.jkt ? { cnf: { jkt: g.jkt } } : {}),
  };
  const token = await new SignJWT({
    eventId: claims.eventId,
    purchaseCell: claims.purchaseCell,
    directoryEpoch: claims.directoryEpoch,
    ...(claims.cnf ? { cnf: claims.cnf } : {}),
  })
    .setProtectedHeader({ alg, kid, typ: 'JWT' })
    .setJti(claims.jti)
    .setSubject(claims.sub)
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .setAudience(ADMISSION_AUDIENCE)
    .setIssuer(ADMISSION_ISSUER)
    .sign(key);
  metrics.admissionTokens.inc({ outcome: 'minted' });
  return { token, claims, kid };
}
