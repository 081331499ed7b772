import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteKeys, verifyToken } from '../src/tokens';

/** A key endpoint that can fail (its control plane's database gone) and a verifier with a short cache over it. */
const options = { issuer: 'onsale:test', audience: 'onsale:test', algorithms: ['RS256'] };
let server: Server;
let url: string;
let answer: 'keys' | 'error' = 'keys';
let jwks: unknown;
let privateKey: CryptoKey;
let strangerKey: CryptoKey;

const sign = (key: CryptoKey) =>
  new SignJWT({ sub: 'buyer' })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setExpirationTime('5m')
    .sign(key);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  privateKey = pair.privateKey;
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
  server = createServer((_, res) => {
    if (answer === 'error') res.writeHead(503).end('{"error":{"code":"internal"}}');
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe('remote keys while their endpoint fails', () => {
  it('keep verifying with the last key set fetched for up to staleMs, then give no verdict; a forgery stays invalid', async () => {
    answer = 'keys';
    const keys = remoteKeys(url, 50, 1_000);
    const check = async (key: CryptoKey) => (await verifyToken(await sign(key), keys, options, (p) => p)).ok;
    expect(await check(privateKey)).toBe(true);

    answer = 'error';
    await sleep(120); // past the cache age: the next check refetches, and the endpoint fails
    expect(await check(privateKey)).toBe(true);
    expect(await check(strangerKey)).toBe(false);

    await sleep(1_100); // past staleMs since the last good fetch
    const verdict = await verifyToken(await sign(privateKey), keys, options, (p) => p);
    expect(verdict).toEqual({ ok: false, reason: 'keys_unavailable' });

    answer = 'keys';
    await sleep(60);
    expect(await check(privateKey)).toBe(true);
  });

  it('with no key set fetched yet, an endpoint that fails gives no verdict', async () => {
    answer = 'error';
    const verdict = await verifyToken(await sign(privateKey), remoteKeys(url, 50, 60_000), options, (p) => p);
    expect(verdict).toEqual({ ok: false, reason: 'keys_unavailable' });
  });
});
