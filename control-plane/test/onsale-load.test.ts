import { EventLoad } from '@onsale/contracts';
import { describe, expect } from 'vitest';
import { type Harness, scheduledEvent } from '../../test/support/control-plane';
import { controlPlaneTest, type TestTenant } from '../../test/support/fixtures';
import { loadEventIntoCell } from '../src/onsale/load';
import { runSchedulerTick } from '../src/onsale/scheduler';

const it = controlPlaneTest({ cellId: 'cell-load', env: { LOAD_MAX_ATTEMPTS: '5' } });

const onsale = async (h: Harness, t: TestTenant, eventId: string) =>
  (await h.req('GET', `/events/${eventId}/onsale`, { token: t.viewer })).body;

describe('scheduling loads the event into its cell', () => {
  it('sends contracts’ EventLoad with the shared bearer, idempotently, and shows the event ready', async ({
    h,
    fakeCell: cell,
    tenant: t,
  }) => {
    const { eventId, onsale: scheduled } = await scheduledEvent(h, t.manager, { seats: 25 });
    expect(scheduled).toMatchObject({ ready: false, load: { status: 'pending', attempts: 0 } });
    await runSchedulerTick(h.services);
    const s = await onsale(h, t, eventId);
    expect(s).toMatchObject({
      ready: true,
      load: { status: 'loaded', attempts: 1, lastError: null, cellId: 'cell-load', directoryEpoch: 1 },
    });
    const sent = cell.loads.at(-1)!;
    expect(sent.auth).toBe('Bearer test-cell-internal-token-0123456789');
    const body = EventLoad.parse(sent.body);
    expect(body).toMatchObject({
      eventId,
      tenantId: t.id,
      maxSeatsPerOrder: 4,
      holdTtlSeconds: 600,
      directoryEpoch: 1,
    });
    expect(body.seats).toHaveLength(25);
    expect(body.seats[0]).toMatchObject({ price: 7500, currency: 'eur', section: 'S1' });
    // The seats' tiers travel with the load: the cell prices orders from them.
    const tierCodes = new Set(body.seats.map((x) => x.tier));
    expect(body.tiers?.map((x) => x.code).sort()).toEqual([...tierCodes].sort());
    for (const tier of body.tiers ?? []) expect(tier).toMatchObject({ fee: 0, fees: 'included' });
    // The same seat ids as the directory holds (stable uuids minted by the control plane).
    const ids = await h.services.pool.query('select id from seats where event_id = $1 order by label', [eventId]);
    expect(body.seats.map((x) => x.id)).toEqual(ids.rows.map((r) => r.id));
    // Idempotent: the verb can run again and the cell answers created=false.
    const again = await loadEventIntoCell({ ctx: h.services, eventId });
    expect(again).toMatchObject({ seats: 25, created: false });
  });

  it('retries a cell that refuses, showing each failure, then becomes ready', async ({
    h,
    fakeCell: cell,
    tenant: t,
  }) => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 10 });
    cell.refuse(3, 503);
    await runSchedulerTick(h.services);
    let s = await onsale(h, t, eventId);
    expect(s).toMatchObject({ ready: false, load: { status: 'failed', attempts: 1 } });
    expect(s.load.lastError).toMatch(/503.*cell_unavailable/);
    expect(new Date(s.load.nextAttemptAt).getTime()).toBe(h.clock.now().getTime() + 1000);

    // Not yet due: the scheduler leaves it alone.
    await runSchedulerTick(h.services);
    expect((await onsale(h, t, eventId)).load.attempts).toBe(1);

    // Backoff doubles: 1 s, 2 s, 4 s.
    h.clock.advance(1000);
    await runSchedulerTick(h.services);
    s = await onsale(h, t, eventId);
    expect(s.load).toMatchObject({ status: 'failed', attempts: 2 });
    expect(new Date(s.load.nextAttemptAt).getTime()).toBe(h.clock.now().getTime() + 2000);
    h.clock.advance(2000);
    await runSchedulerTick(h.services);
    expect((await onsale(h, t, eventId)).load).toMatchObject({ status: 'failed', attempts: 3 });
    h.clock.advance(4000);
    await runSchedulerTick(h.services);
    s = await onsale(h, t, eventId);
    expect(s).toMatchObject({ ready: true, load: { status: 'loaded', attempts: 4, lastError: null } });
  });

  it('does not start releasing an onsale whose event is not loaded, and starts once it is', async ({
    h,
    fakeCell: cell,
    tenant: t,
  }) => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 10, opensInMs: 0, onsaleInMs: 1000 });
    cell.refuse(1, 500);
    h.clock.advance(1000);
    const first = await runSchedulerTick(h.services);
    expect(first.loadFailed).toBeGreaterThanOrEqual(1);
    expect(first.blocked).toBeGreaterThanOrEqual(1);
    let s = await onsale(h, t, eventId);
    expect(s).toMatchObject({ ready: false, startedAt: null, room: { releasing: false } });
    h.clock.advance(1000);
    await runSchedulerTick(h.services);
    s = await onsale(h, t, eventId);
    expect(s.ready).toBe(true);
    expect(s.room.releasing).toBe(true);
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('on_sale');
  });

  it('gives up after LOAD_MAX_ATTEMPTS failures in a row and shows it, until an operator retries', async ({
    h,
    fakeCell: cell,
    tenant: t,
  }) => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 5 });
    cell.refuse(1_000, 503);
    const sent = () => cell.loads.filter((l) => l.body.eventId === eventId).length;
    for (let i = 0; i < 5; i++) {
      await runSchedulerTick(h.services);
      h.clock.advance(16_000); // the backoff after the fourth failure
    }
    const s = await onsale(h, t, eventId);
    expect(s).toMatchObject({ ready: false, load: { status: 'gave_up', attempts: 5, nextAttemptAt: null } });
    expect(s.load.lastError).toMatch(/503.*cell_unavailable/);
    expect(sent()).toBe(5);
    // The scheduler leaves it alone, though the longest backoff (a minute) has passed twice over.
    h.clock.advance(120_000);
    await runSchedulerTick(h.services);
    expect(sent()).toBe(5);
    // An operator's retry tries once more; the cell answering, the event is ready.
    cell.refuse(0);
    const r = await h.req('POST', `/operator/events/${eventId}/load`, { token: h.operatorToken });
    expect(r.status).toBe(200);
    expect(r.body.load).toMatchObject({ status: 'loaded', attempts: 6 });
  });

  it('an operator can retry a load at once', async ({ h, fakeCell: cell, tenant: t }) => {
    const { eventId } = await scheduledEvent(h, t.manager, { seats: 5 });
    cell.refuse(1, 503);
    await runSchedulerTick(h.services);
    const r = await h.req('POST', `/operator/events/${eventId}/load`, { token: h.operatorToken });
    expect(r.status).toBe(200);
    expect(r.body.load).toMatchObject({ status: 'loaded', attempts: 2 });
  });
});
