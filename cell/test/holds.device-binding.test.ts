import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { type TestDevice, testDevice } from '../../test/support/device';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let device: TestDevice;
let thief: TestDevice;
let seat = 0;

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  event = await loadIntoCell(cell, eventLoad(30));
  [device, thief] = await Promise.all([testDevice(), testDevice()]);
});
afterAll(async () => {
  await cell?.close();
  await identity?.close();
});

const holdsUrl = () => `${cell.url}/events/${event.eventId}/holds`;
const heldOrders = async () => (await cell.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders'))[0]!.n;

async function hold(userId: string, headers: Record<string, string>) {
  return fetch(holdsUrl(), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${await identity.buyerToken(userId)}`,
      'idempotency-key': randomUUID(),
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify({ seatIds: [event.seats[seat++]!.id] }),
  });
}

describe('admission tokens bound to a device key (DPoP) at the cell', () => {
  const userId = 'buyer-bound';
  const boundToken = () =>
    identity.admissionToken({ sub: userId, eventId: event.eventId, purchaseCell: cell.cellId, jkt: device.jkt });

  it('takes a hold whose DPoP proof is signed by the key the token names', async () => {
    const token = await boundToken();
    const res = await hold(userId, await device.headers('POST', holdsUrl(), token));
    expect(res.status).toBe(202);
  });

  it('refuses the token copied to another client: its proof is signed by another key', async () => {
    const token = await boundToken();
    const before = await heldOrders();
    const res = await hold(userId, await thief.headers('POST', holdsUrl(), token));
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body.error.code).toBe('admission_invalid');
    expect(body.error.details).toMatchObject({ reason: 'dpop_key_mismatch', header: 'DPoP' });
    expect(await heldOrders()).toBe(before);
  });

  const refused: [string, (token: string) => Promise<Record<string, string>>, string][] = [
    ['without a proof', async (token) => ({ 'x-admission-token': token }), 'dpop_missing'],
    [
      'with a proof made for another request',
      async (token) => ({ 'x-admission-token': token, dpop: await device.proof('GET', holdsUrl(), token) }),
      'dpop_method',
    ],
    [
      'with a proof made for another URL',
      async (token) => ({
        'x-admission-token': token,
        dpop: await device.proof('POST', `${cell.url}/events/${event.eventId}/orders`, token),
      }),
      'dpop_url',
    ],
    [
      'with a proof older than a minute',
      async (token) => ({
        'x-admission-token': token,
        dpop: await device.proof('POST', holdsUrl(), token, { iat: Math.floor(Date.now() / 1000) - 120 }),
      }),
      'dpop_stale',
    ],
    [
      'with a proof naming another admission token',
      async (token) => ({ 'x-admission-token': token, dpop: await device.proof('POST', holdsUrl(), `${token}x`) }),
      'dpop_token_hash',
    ],
  ];
  for (const [name, headers, reason] of refused)
    it(`refuses a bound token ${name} (${reason})`, async () => {
      const res = await hold(userId, await headers(await boundToken()));
      expect(res.status).toBe(403);
      expect((await res.json()).error.details.reason).toBe(reason);
    });

  it('refuses a proof used a second time, even by its own device', async () => {
    const token = await boundToken();
    const headers = await device.headers('POST', holdsUrl(), token);
    expect((await hold(userId, headers)).status).toBe(202);
    const replay = await hold(userId, headers);
    expect(replay.status).toBe(403);
    expect((await replay.json()).error.details.reason).toBe('dpop_replayed');
  });

  it('still takes an unbound token (a client that sent no key) without a proof', async () => {
    const token = await identity.admissionToken({ sub: userId, eventId: event.eventId, purchaseCell: cell.cellId });
    expect((await hold(userId, { 'x-admission-token': token })).status).toBe(202);
  });
});
