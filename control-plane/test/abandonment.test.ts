import { describe, expect } from 'vitest';
import type { Harness } from '../../test/support/control-plane';
import { scheduledEvent } from '../../test/support/control-plane';
import { controlPlaneTest, type TestTenant } from '../../test/support/fixtures';
import { runSchedulerTick } from '../src/onsale/scheduler';
import { runControllerTick } from '../src/release-controller/tick';
import { releaseStep } from '../src/waiting-room/release';

const it = controlPlaneTest({
  cellId: 'cell-ab',
  env: {
    WAITING_ROOM_ABANDON_SECONDS: '30',
    ADMISSION_CLAIM_WINDOW_SECONDS: '20',
    ADMISSION_TOKEN_TTL_SECONDS: '120',
  },
});

const join = (h: Harness, eventId: string, token: string) => h.req('POST', `/events/${eventId}/queue`, { token });
const me = (h: Harness, eventId: string, token: string) => h.req('GET', `/events/${eventId}/queue/me`, { token });

async function liveOnsale(h: Harness, t: TestTenant, o: Parameters<typeof scheduledEvent>[2]) {
  const ev = await scheduledEvent(h, t.manager, { opensInMs: 0, onsaleInMs: 1000, ...o });
  await runSchedulerTick(h.services);
  return ev;
}
async function start(h: Harness) {
  h.clock.advance(1000);
  await runSchedulerTick(h.services);
}

describe('abandonment', () => {
  it('skips a waiter who stopped polling; they can rejoin at the back', async ({ h, tenant: t }) => {
    const { eventId } = await liveOnsale(h, t, { maxReleaseRate: 4 }); // R starts at 1/s
    const [silent, active1, active2] = await Promise.all(['silent', 'act-1', 'act-2'].map((s) => h.buyer(s)));
    for (const tk of [silent!, active1!, active2!]) await join(h, eventId, tk);
    await start(h);
    // 40 s pass: the active ones poll, the silent one does not.
    for (let i = 0; i < 4; i++) {
      h.clock.advance(10_000);
      await me(h, eventId, active1!);
      await me(h, eventId, active2!);
    }
    const r = await releaseStep(h.services, eventId);
    expect(r.skipped).toBe(1);
    expect(r.released).toEqual(['act-1']);
    expect((await me(h, eventId, silent!)).body.status).toBe('skipped');
    const back = await join(h, eventId, silent!);
    expect(back.body).toMatchObject({ status: 'waiting', joined: true, position: 2 });
  });

  it('an unused token frees its slot for the next waiter; a used one holds it until expiry', async ({
    h,
    tenant: t,
  }) => {
    const { eventId } = await liveOnsale(h, t, { maxReleaseRate: 4, maxActiveShoppers: 1 });
    const buyers = await Promise.all(['slot-1', 'slot-2', 'slot-3'].map((s) => h.buyer(s)));
    for (const tk of buyers) await join(h, eventId, tk);
    await start(h);
    const poll = () => Promise.all(buyers.slice(1).map((tk) => me(h, eventId, tk)));

    h.clock.advance(1000);
    expect((await releaseStep(h.services, eventId)).released).toEqual(['slot-1']);
    // One active shopper = the cap: nobody else is released while slot-1's window is open.
    h.clock.advance(5000);
    await poll();
    expect((await releaseStep(h.services, eventId)).released).toEqual([]);
    // slot-1 never collects the admission: after the claim window (20 s) the slot frees.
    h.clock.advance(16_000);
    await poll();
    const next = await releaseStep(h.services, eventId);
    expect(next.released).toEqual(['slot-2']);
    expect((await me(h, eventId, buyers[0]!)).body.status).toBe('expired');

    // slot-2 collects the token: the slot is now held until the token expires (120 s).
    const got = await me(h, eventId, buyers[1]!);
    expect(got.body.status).toBe('released');
    h.clock.advance(60_000);
    await poll();
    expect((await releaseStep(h.services, eventId)).released).toEqual([]);
    h.clock.advance(61_000);
    await poll();
    expect((await releaseStep(h.services, eventId)).released).toEqual(['slot-3']);
    expect((await h.req('GET', `/events/${eventId}/onsale`, { token: t.viewer })).body.room.activeShoppers).toBe(1);
  });
});

describe('inventory-aware release', () => {
  it('stops at sold out, tells waiters, and resumes when seats come back', async ({ h, fakeCell: cell, tenant: t }) => {
    const { eventId } = await liveOnsale(h, t, { maxReleaseRate: 10, seats: 5 });
    const buyers = await Promise.all(Array.from({ length: 5 }, (_, i) => h.buyer(`inv-${i}`)));
    for (const tk of buyers) await join(h, eventId, tk);
    await start(h);

    cell.signals.availableSeats = { [eventId]: 0 };
    await runControllerTick(h.services);
    h.clock.advance(2000);
    const stopped = await releaseStep(h.services, eventId);
    expect(stopped).toMatchObject({ outcome: 'sold_out', released: [] });
    const told = (await me(h, eventId, buyers[0]!)).body;
    expect(told).toMatchObject({ status: 'waiting', soldOutForNow: true, position: 1 });
    expect(told.message).toMatch(/sold out for now/);
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('sold_out');

    // Holds expire, seats return: releasing resumes.
    cell.signals.availableSeats = { [eventId]: 3 };
    await runControllerTick(h.services);
    h.clock.advance(1000);
    await Promise.all(buyers.map((tk) => me(h, eventId, tk)));
    const resumed = await releaseStep(h.services, eventId);
    expect(resumed.outcome).toBe('ok');
    expect(resumed.released.length).toBeGreaterThan(0);
    expect((await me(h, eventId, buyers[4]!)).body.soldOutForNow).toBe(false);
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('on_sale');
  });
});
