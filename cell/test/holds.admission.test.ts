import { randomUUID } from 'node:crypto';
import { type EventLoad, revocationKeys } from '@onsale/contracts';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { type AdmissionInput, startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { serviceEnv } from '../../test/support/services';

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let otherEvent: EventLoad;
let redis: Redis;

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity, { env: { JWKS_CACHE_MS: '300' } });
  event = await loadIntoCell(cell, eventLoad(20));
  otherEvent = await loadIntoCell(cell, eventLoad(5));
  redis = new Redis(serviceEnv().REDIS_URL!);
});
afterAll(async () => {
  redis?.disconnect();
  await cell?.close();
  await identity?.close();
});

const written = async () =>
  (
    await cell.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM orders) + (SELECT count(*) FROM hold_seats) + (SELECT count(*) FROM outbox)
            + (SELECT count(*) FROM idempotency_keys) AS n`,
    )
  )[0]!.n;

async function holdWith(
  userId: string,
  admission: string | undefined,
  seat = event.seats[0]!.id,
  claims?: Parameters<TestIdentity['buyerToken']>[1],
) {
  const headers: Record<string, string> = {
    authorization: `Bearer ${await identity.buyerToken(userId, claims)}`,
    'idempotency-key': randomUUID(),
    'content-type': 'application/json',
  };
  if (admission !== undefined) headers['x-admission-token'] = admission;
  return fetch(`${cell.url}/events/${event.eventId}/holds`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ seatIds: [seat] }),
  });
}

describe('admission tokens', () => {
  const userId = 'buyer-adm';
  const valid = (): AdmissionInput => ({ sub: userId, eventId: event.eventId, purchaseCell: cell.cellId });

  const refused: [string, () => Promise<string | undefined>, string?][] = [
    ['missing', async () => undefined],
    ['for another user', () => identity.admissionToken({ ...valid(), sub: 'someone-else' }), 'user'],
    ['for another event', () => identity.admissionToken({ ...valid(), eventId: otherEvent.eventId }), 'event'],
    ['for another cell', () => identity.admissionToken({ ...valid(), purchaseCell: 'cell-other' }), 'cell'],
    ['expired', () => identity.admissionToken({ ...valid(), expiresInSeconds: -5 })],
    ['with a bad signature', () => identity.forgedAdmissionToken(valid())],
    ['signed by an unknown kid', () => identity.unknownKidAdmissionToken(valid())],
    ['garbage', async () => 'not.a.jwt'],
  ];

  for (const [name, token, reason] of refused) {
    it(`refuses a token ${name} with 403 and writes nothing`, async () => {
      const before = await written();
      const res = await holdWith(userId, await token());
      expect(res.status).toBe(403);
      const body = await res.json();
      expect(body.error.code).toBe('admission_invalid');
      if (reason) expect(body.error.details.reason).toBe(reason);
      expect(await written()).toBe(before);
    });
  }

  it('accepts a valid token, and reuses it for a retry', async () => {
    const token = await identity.admissionToken(valid());
    expect((await holdWith(userId, token, event.seats[1]!.id)).status).toBe(202);
    expect((await holdWith(userId, token, event.seats[2]!.id)).status).toBe(202);
  });

  it('401 without a valid buyer token, before anything else', async () => {
    const res = await fetch(`${cell.url}/events/${event.eventId}/holds`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope', 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify({ seatIds: [event.seats[3]!.id] }),
    });
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe('unauthenticated');
  });

  it("refuses a promoter's and an operator's identity token with 403, as the shop refuses their sign-in", async () => {
    const staff = [{ tenantId: randomUUID(), role: 'owner' }, { role: 'operator' }];
    for (const claims of staff) {
      const before = await written();
      const res = await holdWith(userId, await identity.admissionToken(valid()), event.seats[9]!.id, claims);
      expect(res.status, JSON.stringify(claims)).toBe(403);
      expect((await res.json()).error.code).toBe('forbidden');
      expect(await written()).toBe(before);
    }
  });

  it('refuses a subject with a control character (a NUL, which PostgreSQL cannot store) with 401, not a 500', async () => {
    for (const sub of ['nul\u0000sub', 'tab\tsub', 'x'.repeat(256)]) {
      const before = await written();
      const res = await holdWith(sub, await identity.admissionToken({ ...valid(), sub }), event.seats[9]!.id);
      expect(res.status, JSON.stringify(sub)).toBe(401);
      expect((await res.json()).error.code).toBe('unauthenticated');
      expect(await written()).toBe(before);
    }
  });

  it('refuses a token whose key the JWKS no longer lists, once the cached JWKS lapses', async () => {
    const token = await identity.admissionToken(valid());
    expect((await holdWith(userId, token, event.seats[4]!.id)).status).toBe(202);
    await identity.retireCurrentAdmissionKey();
    await new Promise((r) => setTimeout(r, 400));
    const before = await written();
    const res = await holdWith(userId, token, event.seats[5]!.id);
    expect(res.status).toBe(403);
    expect(await written()).toBe(before);
    // The new key signs from now on and the cell picks it up from the JWKS.
    expect((await holdWith(userId, await identity.admissionToken(valid()), event.seats[6]!.id)).status).toBe(202);
  });

  it('answers 503 with Retry-After, not 403, while the admission keys cannot be fetched', async () => {
    // Port 9 (discard) refuses connections on this machine: the cell cannot fetch the JWKS.
    const blind = await startTestCell(identity, { env: { ADMISSION_JWKS_URL: 'http://127.0.0.1:9/jwks.json' } });
    try {
      const load = await loadIntoCell(blind, eventLoad(2));
      const token = await identity.admissionToken({ sub: userId, eventId: load.eventId, purchaseCell: blind.cellId });
      const res = await fetch(`${blind.url}/events/${load.eventId}/holds`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await identity.buyerToken(userId)}`,
          'x-admission-token': token,
          'idempotency-key': randomUUID(),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ seatIds: [load.seats[0]!.id] }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect((await res.json()).error.code).toBe('cell_unavailable');
      const orders = await blind.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
      expect(orders[0]!.n).toBe(0);
    } finally {
      await blind.close();
    }
  });

  it('refuses a revoked token (by jti, then by buyer) within the same second', async () => {
    const jti = randomUUID();
    const token = await identity.admissionToken({ ...valid(), jti });
    await redis.set(revocationKeys.jti(jti), '1', 'EX', 60);
    expect((await holdWith(userId, token, event.seats[7]!.id)).status).toBe(403);

    const other = 'buyer-revoked';
    const theirs = await identity.admissionToken({ ...valid(), sub: other });
    await redis.set(revocationKeys.buyer(other), '1', 'EX', 60);
    const res = await holdWith(other, theirs, event.seats[8]!.id);
    expect(res.status).toBe(403);
    expect((await res.json()).error.details.reason).toBe('revoked');
  });
});
