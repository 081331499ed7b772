import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteKeys, verifyToken } from '../src/tokens';

/** A key endpoint that can fail (its control plane's database gone) and a verifier with a short cache over it. */
const options = { issuer: 'onsale:test', audience: 'onsale:test', algorithms: ['RS256'] };
let server: Server;
let url: string;
let answer: 'keys' | 'error' | 'hang' = 'keys';
/** Requests the endpoint holds unanswered ('hang'): a frozen control plane keeps the connection and says nothing. */
const held: { res: ServerResponse; closed: boolean }[] = [];
let jwks: unknown;
let privateKey: CryptoKey;
let strangerKey: CryptoKey;

const sign = (key: CryptoKey, kid = 'k1') =>
  new SignJWT({ sub: 'buyer' })
    .setProtectedHeader({ alg: 'RS256', kid })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setExpirationTime('5m')
    .sign(key);
/** The verdict on a token signed with `key`, checked against `keys`. */
const verdict = async (keys: ReturnType<typeof remoteKeys>, key: CryptoKey, kid?: string) =>
  verifyToken(await sign(key, kid), keys, options, (p) => p);
const verifies = async (keys: ReturnType<typeof remoteKeys>, key: CryptoKey, kid?: string) =>
  (await verdict(keys, key, kid)).ok;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  privateKey = pair.privateKey;
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
  server = createServer((_, res) => {
    if (answer === 'hang') {
      const request = { res, closed: false };
      res.on('close', () => {
        request.closed = true;
      });
      held.push(request);
      return;
    }
    if (answer === 'error') res.writeHead(503).end('{"error":{"code":"internal"}}');
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterAll(async () => {
  for (const h of held) h.res.destroy();
  await new Promise((r) => server.close(r));
});

describe('remote keys while their endpoint fails', () => {
  it('keep verifying with the last key set fetched for up to staleMs, then give no verdict; a forgery stays invalid', async () => {
    answer = 'keys';
    const keys = remoteKeys(url, 50, 1_000);
    expect(await verifies(keys, privateKey)).toBe(true);

    answer = 'error';
    await sleep(120); // past the cache age: the next check refetches, and the endpoint fails
    expect(await verifies(keys, privateKey)).toBe(true);
    expect(await verifies(keys, strangerKey)).toBe(false);

    await sleep(1_100); // past staleMs since the last good fetch
    expect(await verdict(keys, privateKey)).toEqual({ ok: false, reason: 'keys_unavailable' });

    answer = 'keys';
    await sleep(60);
    expect(await verifies(keys, privateKey)).toBe(true);
  });

  it('past the cache age, verify with the last key set while it is fetched again: a hanging endpoint holds no check', async () => {
    answer = 'keys';
    // A cache age long enough that the set the held request finally gives is still fresh at the last check, on a
    // loaded machine too.
    const keys = remoteKeys(url, 500, 60_000);
    expect(await verifies(keys, privateKey)).toBe(true);

    answer = 'hang';
    await sleep(600); // past the cache age
    const before = held.length;
    expect(await verifies(keys, privateKey)).toBe(true);
    expect(await verifies(keys, strangerKey)).toBe(false);
    // Both verdicts came before the refetch was given up: neither waited for it (a check that waits gets its verdict
    // only once the fetch's time-out has closed the request).
    while (held.length === before) await sleep(5);
    expect(held).toHaveLength(before + 1);
    expect(held.at(-1)!.closed).toBe(false);

    // When it answers again, the set it gives is the one checks use.
    held
      .at(-1)!
      .res.writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ keys: [] }));
    answer = 'keys';
    await sleep(20);
    expect(await verifies(keys, privateKey)).toBe(false);
  });

  it('a key the last set lacks (a rotation) is asked of the endpoint, even past the cache age', async () => {
    answer = 'keys';
    const keys = remoteKeys(url, 50, 60_000);
    expect(await verifies(keys, privateKey)).toBe(true);
    const next = await generateKeyPair('RS256', { extractable: true });
    const previous = jwks;
    jwks = { keys: [{ ...(await exportJWK(next.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' }] };
    try {
      await sleep(120);
      expect(await verifies(keys, next.privateKey, 'k2')).toBe(true);
    } finally {
      jwks = previous;
    }
  });

  it('with no key set fetched yet, an endpoint that fails gives no verdict', async () => {
    answer = 'error';
    expect(await verdict(remoteKeys(url, 50, 60_000), privateKey)).toEqual({ ok: false, reason: 'keys_unavailable' });
  });
});
