import { randomBytes } from 'node:crypto';
import {
  ADMISSION_ALG,
  ADMISSION_ALGORITHMS,
  ADMISSION_AUDIENCE,
  ADMISSION_ISSUER,
  AdmissionClaims,
  metrics,
  revocationKeys,
  verifyJwt,
} from '@onsale/contracts';
import { eq } from 'drizzle-orm';
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { describe, expect, onTestFinished } from 'vitest';
import { type Harness, scheduledEvent } from '../../test/support/control-plane';
import { controlPlaneTest, type TestTenant } from '../../test/support/fixtures';
import { seal } from '../src/admission/kek';
import { AdmissionKeyStore } from '../src/admission/key-store';
import { mintAdmissionToken } from '../src/admission/mint';
import { resealSigningKeys } from '../src/admission/reseal-main';
import { revokeAdmission } from '../src/admission/revoke';
import { keksFrom, ResealKeysConfig } from '../src/config';
import { signingKeys } from '../src/db/schema';
import { runSchedulerTick } from '../src/onsale/scheduler';
import { releaseStep } from '../src/waiting-room/release';

const it = controlPlaneTest({
  cellId: 'cell-adm',
  env: { KEY_ANNOUNCE_SECONDS: '600', ADMISSION_TOKEN_TTL_SECONDS: '300', WAITING_ROOM_ABANDON_SECONDS: '3600' },
});

const jwks = async (h: Harness) => createLocalJWKSet((await h.req('GET', '/.well-known/jwks.json')).body);
const verify = async (h: Harness, token: string) =>
  jwtVerify(token, await jwks(h), {
    audience: ADMISSION_AUDIENCE,
    issuer: ADMISSION_ISSUER,
    algorithms: [ADMISSION_ALG],
    currentDate: h.clock.now(),
  });
const mint = (h: Harness, sub: string) => {
  const iat = Math.floor(h.clock.now().getTime() / 1000);
  return mintAdmissionToken(h.services.keys, {
    sub,
    eventId: '0b9f6a52-8f5e-4f55-9d4c-1f3c8c1c2b11',
    purchaseCell: 'cell-adm',
    directoryEpoch: 1,
    iat,
    exp: iat + 300,
  });
};

/** A buyer who joined an onsale's waiting room and was released; `me` is their first queue/me answer's body. */
async function releasedBuyer(h: Harness, t: TestTenant, sub: string) {
  const { eventId } = await scheduledEvent(h, t.manager, { opensInMs: 0, onsaleInMs: 1000, maxReleaseRate: 4 });
  const buyer = await h.buyer(sub);
  await h.req('POST', `/events/${eventId}/queue`, { token: buyer });
  h.clock.advance(1000);
  await runSchedulerTick(h.services);
  h.clock.advance(1000);
  await releaseStep(h.services, eventId);
  const answer = await h.req('GET', `/events/${eventId}/queue/me`, { token: buyer });
  return { eventId, buyer, me: answer.body, answer };
}

describe('signing keys', () => {
  it('stores private keys encrypted with the KEK', async ({ h }) => {
    const rows = await h.services.pool.query('select private_key_enc, public_jwk from signing_keys');
    for (const r of rows.rows) {
      expect(r.private_key_enc).toMatch(/^v1\./);
      expect(r.private_key_enc).not.toMatch(/"d"/);
      expect(r.public_jwk.d).toBeUndefined();
    }
  });

  it('rotation: announced before use, old tokens valid until expiry, new ones verifiable', async ({ h }) => {
    const oldToken = (await mint(h, 'rot-1')).token;
    const oldKid = decodeProtectedHeader(oldToken).kid;
    const rotated = await h.req('POST', '/operator/signing-keys/rotate', { token: h.operatorToken });
    expect(rotated.status).toBe(201);
    const newKid = rotated.body.kid;
    // Announced: in the JWKS, but not yet signing.
    h.services.keys.list(true);
    let set = (await h.req('GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    expect(set).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect(decodeProtectedHeader((await mint(h, 'rot-2')).token).kid).toBe(oldKid);

    // After the announce period the new key signs; a token from the old key still verifies.
    h.clock.advance(600_000 + 1000);
    await h.services.keys.list(true);
    const newToken = (await mint(h, 'rot-3')).token;
    expect(decodeProtectedHeader(newToken).kid).toBe(newKid);
    await expect(verify(h, newToken)).resolves.toBeTruthy();
    const lastOld = await h.services.keys.list(true);
    expect(lastOld.find((k) => k.kid === oldKid)?.publishedUntil?.getTime()).toBe(
      lastOld.find((k) => k.kid === oldKid)!.retiredAt!.getTime() + 300_000,
    );

    // The old key stays published until its last token has expired...
    h.clock.advance(290_000);
    await h.services.keys.list(true);
    set = (await h.req('GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    expect(set).toContain(oldKid);
    // ...and then leaves the JWKS.
    h.clock.advance(20_000);
    await h.services.keys.list(true);
    set = (await h.req('GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    expect(set).toEqual([newKid]);
    await expect(verify(h, (await mint(h, 'rot-4')).token)).resolves.toBeTruthy();
    void oldToken;
  });

  it('new keys sign RS256; a key made before (EdDSA) signs as its row says until it retires, and its tokens pass the platform check', async ({
    h,
  }) => {
    const [first] = await h.services.keys.list(true);
    expect(first).toMatchObject({ alg: 'RS256', publicJwk: { kty: 'RSA', alg: 'RS256' } });
    const rsaToken = (await mint(h, 'alg-1')).token;
    expect(decodeProtectedHeader(rsaToken).alg).toBe('RS256');

    // A row as the key store wrote them before the switch, activated after the RS256 key: it signs now.
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = 'adm_before_rs256';
    await h.services.db.insert(signingKeys).values({
      kid,
      alg: 'EdDSA',
      publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' },
      privateKeyEnc: seal(
        Buffer.from(h.config.SIGNING_KEY_KEK, 'base64'),
        JSON.stringify(await exportJWK(privateKey)),
        kid,
      ),
      createdAt: h.clock.now(),
      activatesAt: new Date(h.clock.now().getTime() + 1),
    });
    onTestFinished(async () => {
      await h.services.db.delete(signingKeys).where(eq(signingKeys.kid, kid));
      await h.services.keys.list(true);
    });
    h.clock.advance(1000);
    await h.services.keys.list(true);
    const edToken = (await mint(h, 'alg-2')).token;
    expect(decodeProtectedHeader(edToken)).toMatchObject({ alg: 'EdDSA', kid });

    // The check the router and the cells run (contracts' verifyJwt with the accepted algs) passes both...
    const keys = await jwks(h);
    const check = (token: string, algorithms = ADMISSION_ALGORITHMS) =>
      verifyJwt(token, keys, {
        issuer: ADMISSION_ISSUER,
        audience: ADMISSION_AUDIENCE,
        algorithms,
        currentDate: h.clock.now(),
      });
    await expect(check(rsaToken)).resolves.toMatchObject({ sub: 'alg-1' });
    await expect(check(edToken)).resolves.toMatchObject({ sub: 'alg-2' });
    // ...and an alg outside the list is refused, whatever the key.
    await expect(check(edToken, ['RS256'])).rejects.toThrow(/alg/);
  });

  it('tokens from the waiting room carry the current kid and verify against the served JWKS', async ({
    h,
    tenant: t,
  }) => {
    const { eventId, me } = await releasedBuyer(h, t, 'adm-wr');
    const { payload } = await verify(h, me.admission.token);
    expect(AdmissionClaims.parse(payload)).toMatchObject({ sub: 'adm-wr', eventId, purchaseCell: 'cell-adm' });
  });
});

describe('revocation', () => {
  it('by jti: writes the contract key with TTL = remaining token life, and the token is no longer handed out', async ({
    h,
    tenant: t,
  }) => {
    const { eventId, buyer, me } = await releasedBuyer(h, t, 'rev-1');
    const claims = AdmissionClaims.parse((await verify(h, me.admission.token)).payload);
    h.clock.advance(100_000);
    const r = await h.req('POST', '/operator/admissions/revocations', {
      token: h.operatorToken,
      body: { jti: claims.jti, exp: claims.exp, reason: 'fraud' },
    });
    expect(r.status).toBe(201);
    const key = revocationKeys.jti(claims.jti);
    onTestFinished(async () => {
      await h.services.redis.del(key);
    });
    expect(r.body.key).toBe(key);
    expect(await h.services.redis.exists(key)).toBe(1);
    const ttl = await h.services.redis.ttl(key);
    expect(ttl).toBeGreaterThan(190);
    expect(ttl).toBeLessThanOrEqual(200);
    const s = (await h.req('GET', `/events/${eventId}/queue/me`, { token: buyer })).body;
    expect(s).toMatchObject({ status: 'revoked', admission: null });
    const audit = await h.services.pool.query('select * from revocations where jti = $1', [claims.jti]);
    expect(audit.rows[0]).toMatchObject({ reason: 'fraud', revoked_by: 'operator:op-1' });
  });

  it('by buyer: writes revoked:sub:<id> for the longest token life', async ({ h }) => {
    const r = await revokeAdmission({ ctx: h.services, input: { sub: 'rev-buyer-2', reason: 'bot' }, actor: 'test' });
    const key = revocationKeys.buyer('rev-buyer-2');
    onTestFinished(async () => {
      await h.services.redis.del(key);
    });
    expect(r.key).toBe(key);
    expect(Number(await h.services.redis.get(key))).toBe(Math.floor(h.clock.now().getTime() / 1000));
    expect(await h.services.redis.ttl(key)).toBeGreaterThan(295);
    const bad = await h.req('POST', '/operator/admissions/revocations', {
      token: h.operatorToken,
      body: { reason: 'x' },
    });
    expect(bad.status).toBe(400);
  });
});

describe('KEK rotation', () => {
  const storeWith = (h: Harness, kek: string, previous?: string) =>
    new AdmissionKeyStore({
      db: h.services.db,
      ...keksFrom(ResealKeysConfig.parse({ ...kekEnv(h, kek, previous) })),
      clock: h.clock,
      tokenTtlSeconds: 300,
      announceSeconds: 600,
      rotationIntervalSeconds: 86_400,
    });
  const kekEnv = (h: Harness, kek: string, previous?: string) => ({
    DATABASE_URL_CONTROL_PLANE: h.config.DATABASE_URL_CONTROL_PLANE,
    SIGNING_KEY_KEK: kek,
    ...(previous ? { SIGNING_KEY_KEK_PREVIOUS: previous } : {}),
  });

  it('a new KEK with the old one as previous keeps signing; the reseal moves every key under the new one; then the old KEK retires', async ({
    h,
  }) => {
    const oldKek = h.config.SIGNING_KEY_KEK;
    const newKek = randomBytes(32).toString('base64');
    const { kid } = await h.services.keys.signingKey();

    // Step 1: processes start with the new KEK and the old one beside it: the key still opens.
    expect((await storeWith(h, newKek, oldKek).signingKey()).kid).toBe(kid);
    // Before the reseal, the new KEK alone opens nothing.
    await expect(storeWith(h, newKek).signingKey()).rejects.toMatchObject({ code: 'signing_key_unavailable' });

    // Step 2: the reseal task, as the deploy runs it.
    const first = await resealSigningKeys(ResealKeysConfig.parse(kekEnv(h, newKek, oldKek)));
    expect(first.resealed).toContain(kid);
    expect(first.unopenable).toEqual([]);
    const again = await resealSigningKeys(ResealKeysConfig.parse(kekEnv(h, newKek, oldKek)));
    expect(again.resealed).toEqual([]);
    expect(again.current).toBe(first.resealed.length + first.current);

    // Step 3: the old KEK retired: the new one alone opens the key, the old one no longer does.
    expect((await storeWith(h, newKek).signingKey()).kid).toBe(kid);
    await expect(storeWith(h, oldKek).signingKey()).rejects.toMatchObject({ code: 'signing_key_unavailable' });
  });

  it('a reseal names the keys no KEK opens, and leaves them as they were', async ({ h }) => {
    const { kid } = await h.services.keys.signingKey();
    const before = await h.services.db.select().from(signingKeys).where(eq(signingKeys.kid, kid));
    const stranger = randomBytes(32).toString('base64');
    const result = await resealSigningKeys(ResealKeysConfig.parse(kekEnv(h, stranger)));
    expect(result.unopenable).toContain(kid);
    const after = await h.services.db.select().from(signingKeys).where(eq(signingKeys.kid, kid));
    expect(after[0]!.privateKeyEnc).toBe(before[0]!.privateKeyEnc);
  });

  it('a KEK that opens no key: the room answers 503 signing_key_unavailable naming the key, and the failure is counted', async ({
    h,
    tenant,
  }) => {
    const { kid } = await h.services.keys.signingKey();
    const keys = h.services.keys;
    h.services.keys = storeWith(h, randomBytes(32).toString('base64'));
    onTestFinished(() => {
      h.services.keys = keys;
    });
    const failures = async () =>
      (await metrics.signingKeyFailures.get()).values.find((v) => v.labels.reason === 'sealed')?.value ?? 0;
    const counted = await failures();
    const { answer: me } = await releasedBuyer(h, tenant, 'buyer-kek');
    expect(me.status).toBe(503);
    expect(me.body.error.code).toBe('signing_key_unavailable');
    expect(me.body.error.message).toContain(kid);
    expect(me.headers.get('retry-after')).toBe('30');
    expect(await failures()).toBeGreaterThan(counted);
  });
});

describe('scheduled rotation', () => {
  it('rotates when the newest key is due, once, across concurrent callers', async ({ h }) => {
    expect(await h.services.keys.rotateIfDue()).toBeNull();
    h.clock.advance(86_400_000);
    const results = await Promise.all([
      h.services.keys.rotateIfDue(),
      h.services.keys.rotateIfDue(),
      h.services.keys.rotateIfDue(),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});
