import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADMISSION_AUDIENCE, ADMISSION_ISSUER } from '@onsale/contracts';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

type Key = { kid: string; privateKey: CryptoKey; jwk: JWK };

/** RS256, as the control plane signs admissions and as managed identity providers (Cognito, Auth0) sign buyers. */
const ALG = 'RS256';

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(ALG, { modulusLength: 2048, extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' } };
}

export const BUYER_ISSUER = 'https://identity.test.local';
export const BUYER_AUDIENCE = 'onsale:buyer';

export interface AdmissionInput {
  sub: string;
  eventId: string;
  purchaseCell: string;
  directoryEpoch?: number;
  expiresInSeconds?: number;
  jti?: string;
  /** Binds the token to a device key (cnf.jkt), as the waiting room does for a buyer who joined with one. */
  jkt?: string;
}

/**
 * A test identity provider and admission signer behind a real HTTP JWKS endpoint, so cells
 * verify tokens exactly as in production (fetch, cache, unknown kid, key removal).
 */
export async function startIdentity() {
  const buyerKey = await newKey('buyer-1');
  const admissionKeys: Key[] = [await newKey('adm-1')];
  const server: Server = createServer((req, res) => {
    const keys =
      req.url === '/buyer/jwks.json' ? [buyerKey] : req.url === '/admission/jwks.json' ? admissionKeys : null;
    if (!keys) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: keys.map((k) => k.jwk) }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const signAdmission = (input: AdmissionInput, key: Key) =>
    new SignJWT({
      eventId: input.eventId,
      purchaseCell: input.purchaseCell,
      directoryEpoch: input.directoryEpoch ?? 1,
      ...(input.jkt ? { cnf: { jkt: input.jkt } } : {}),
    })
      .setProtectedHeader({ alg: ALG, kid: key.kid })
      .setSubject(input.sub)
      .setJti(input.jti ?? randomUUID())
      .setIssuer(ADMISSION_ISSUER)
      .setAudience(ADMISSION_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + (input.expiresInSeconds ?? 300))
      .sign(key.privateKey);

  return {
    buyerJwksUrl: `${base}/buyer/jwks.json`,
    admissionJwksUrl: `${base}/admission/jwks.json`,
    /**
     * `claims`: what else the provider says of the account (`email`, `email_verified`; a staff account's `tenantId`
     * and `role`).
     */
    buyerToken: (
      userId: string,
      claims: { email?: string; email_verified?: boolean; tenantId?: string; role?: string } = {},
    ) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: ALG, kid: buyerKey.kid })
        .setSubject(userId)
        .setIssuer(BUYER_ISSUER)
        .setAudience(BUYER_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(buyerKey.privateKey),
    admissionToken: (input: AdmissionInput) => signAdmission(input, admissionKeys[0]!),
    /** Signed by a key whose kid the JWKS lists, but with other key material: a forgery. */
    forgedAdmissionToken: async (input: AdmissionInput) =>
      signAdmission(input, { ...(await newKey(admissionKeys[0]!.kid)) }),
    /** Signed by a key the JWKS never listed. */
    unknownKidAdmissionToken: async (input: AdmissionInput) => signAdmission(input, await newKey('adm-unknown')),
    /** Rotates: the current key leaves the JWKS and a new one signs from now on; returns a signer for the old key. */
    async retireCurrentAdmissionKey() {
      const old = admissionKeys.shift()!;
      admissionKeys.unshift(await newKey(`adm-${Date.now()}`));
      return (input: AdmissionInput) => signAdmission(input, old);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
export type TestIdentity = Awaited<ReturnType<typeof startIdentity>>;
