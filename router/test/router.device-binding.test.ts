import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { type TestDevice, testDevice } from '../../test/support/device';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import type { RunningRouter } from '../src/router';
import { type FakeControlPlane, metricValue, routerFor, startFakeControlPlane } from './fakes';

/** A real cell behind the router; admission tokens bound to a device key (cnf.jkt) and DPoP proofs. */
let identity: TestIdentity;
let cell: TestCell;
let controlPlane: FakeControlPlane;
let router: RunningRouter;
let event: EventLoad;
let device: TestDevice;
let thief: TestDevice;
let seat = 0;

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity, { cellId: 'cell-a' });
  event = await loadIntoCell(cell, eventLoad(20));
  controlPlane = await startFakeControlPlane();
  controlPlane.addCell('cell-a', cell.url);
  controlPlane.placeEvent(event.eventId, 'cell-a');
  router = await routerFor(controlPlane, identity.admissionJwksUrl);
  [device, thief] = await Promise.all([testDevice(), testDevice()]);
});

afterAll(async () => {
  await router?.close();
  await controlPlane?.close();
  await cell?.close();
  await identity?.close();
});

const holdsUrl = () => `${router.url}/events/${event.eventId}/holds`;
const refusedAtRouter = (reason: string) => metricValue(router, `router_dpop_proofs_total{outcome="${reason}"}`);
const ordersOf = (userId: string) =>
  cell.db.query<{ id: string }>('SELECT id FROM orders WHERE user_id = $1', [userId]);

async function admitted() {
  const userId = `buyer-${randomUUID()}`;
  const token = await identity.admissionToken({
    sub: userId,
    eventId: event.eventId,
    purchaseCell: 'cell-a',
    jkt: device.jkt,
  });
  const bearer = await identity.buyerToken(userId);
  const hold = (headers: Record<string, string>) =>
    fetch(holdsUrl(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify({ seatIds: [event.seats[seat++]!.id] }),
    });
  return { userId, token, hold };
}

describe('device-bound admission tokens at the router', () => {
  it('forwards a hold whose proof is signed by the bound key, and its retry with a fresh proof', async () => {
    const buyer = await admittedBuyer(identity, cell, event.eventId, undefined, router.url, device);
    const seats = [event.seats[seat++]!.id];
    const first = await buyer.hold(seats, 'retry-key-1');
    expect(first.status).toBe(202);
    const retry = await buyer.hold(seats, 'retry-key-1');
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await ordersOf(buyer.userId)).toHaveLength(1);
  });

  it('refuses the token copied to another client before any cell sees it', async () => {
    const buyer = await admitted();
    const before = await refusedAtRouter('dpop_key_mismatch');
    const res = await buyer.hold(await thief.headers('POST', holdsUrl(), buyer.token));
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { code: string; details: { reason: string } } };
    expect(body.error.code).toBe('admission_invalid');
    expect(body.error.details.reason).toBe('dpop_key_mismatch');
    expect(await refusedAtRouter('dpop_key_mismatch')).toBe(before + 1);
    expect(await ordersOf(buyer.userId)).toEqual([]);
  });

  it('refuses the copied token with no proof at all', async () => {
    const buyer = await admitted();
    const res = await buyer.hold({ 'x-admission-token': buyer.token });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
      'dpop_missing',
    );
  });

  it('refuses a proof made for another host, which only the router can tell', async () => {
    const buyer = await admitted();
    const elsewhere = holdsUrl().replace('127.0.0.1', 'localhost');
    const res = await buyer.hold({
      'x-admission-token': buyer.token,
      dpop: await device.proof('POST', elsewhere, buyer.token),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe('dpop_url');
  });

  it('refuses a replayed proof from its own memory', async () => {
    const buyer = await admitted();
    const headers = await device.headers('POST', holdsUrl(), buyer.token);
    expect((await buyer.hold(headers)).status).toBe(202);
    const before = await refusedAtRouter('dpop_replayed');
    const replay = await buyer.hold(headers);
    expect(replay.status).toBe(403);
    expect(await refusedAtRouter('dpop_replayed')).toBe(before + 1);
  });
});
