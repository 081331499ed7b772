import { describe, expect } from 'vitest';
import { startTestCell } from '../../test/support/cell';
import { type Harness, scheduledEvent } from '../../test/support/control-plane';
import { startCellApiOn, startPgProxy, startSilentPort } from '../../test/support/db-outage';
import { controlPlaneTest, type TestTenant } from '../../test/support/fixtures';
import { startIdentity } from '../../test/support/identity';
import { createHttpCellClient } from '../src/cells/client';
import { runSchedulerTick } from '../src/onsale/scheduler';
import { decide, thresholdsFrom } from '../src/release-controller/decide';
import { runControllerTick } from '../src/release-controller/tick';

const it = controlPlaneTest({ cellId: 'cell-ctl' });

const rateOf = async (h: Harness, t: TestTenant, eventId: string) =>
  (await h.req('GET', `/events/${eventId}/onsale`, { token: t.viewer })).body.release.rate as number;
const tick = async (h: Harness) => {
  h.clock.advance(5000);
  return runControllerTick(h.services);
};

describe('release controller', () => {
  it('raises R additively under thresholds, cuts it within two ticks of a breach, recovers gradually', async ({
    h,
    fakeCell: cell,
    tenant: t,
  }) => {
    const { eventId } = await scheduledEvent(h, t.manager, {
      opensInMs: 0,
      onsaleInMs: 1000,
      maxReleaseRate: 200,
      minReleaseRate: 5,
    });
    h.clock.advance(1000);
    await runSchedulerTick(h.services);
    expect(await rateOf(h, t, eventId)).toBe(50); // 25 % of the ceiling to start

    await tick(h);
    expect(await rateOf(h, t, eventId)).toBe(60); // +5 % of the ceiling per tick
    await tick(h);
    expect(await rateOf(h, t, eventId)).toBe(70);

    // The cell's hold p99 crosses its threshold.
    cell.signals.holdLatencyP99Ms = 1500;
    await tick(h);
    const afterOne = await rateOf(h, t, eventId);
    expect(afterOne).toBe(35);
    await tick(h);
    expect(await rateOf(h, t, eventId)).toBeLessThanOrEqual(17.5);
    for (let i = 0; i < 5; i++) await tick(h);
    expect(await rateOf(h, t, eventId)).toBe(5); // never below the floor

    // Signals clear: R recovers by steps, not at once.
    cell.signals.holdLatencyP99Ms = 120;
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      await tick(h);
      seen.push(await rateOf(h, t, eventId));
    }
    expect(seen).toEqual([15, 25, 35, 45, 55]);
    for (let i = 0; i < 40; i++) await tick(h);
    expect(await rateOf(h, t, eventId)).toBe(200); // never above the ceiling

    // The waiting room releases at the controller's R.
    const meta = await h.services.redis.hget(`${h.config.REDIS_KEY_PREFIX}wr:{${eventId}}:meta`, 'rate');
    expect(Number(meta)).toBe(200);

    // Every decision is recorded: time, signals, old and new R, reason.
    const d = await h.req('GET', `/events/${eventId}/release-decisions?limit=100`, { token: t.viewer });
    expect(d.status).toBe(200);
    const cut = d.body.decisions.find(
      (x: { reason: string; oldRate: number }) => x.reason.startsWith('decrease') && x.oldRate === 70,
    );
    expect(cut).toMatchObject({ cellId: 'cell-ctl', actor: 'controller' });
    expect(cut.reason).toMatch(/holdLatencyP99Ms 1500 >= 800/);
    expect(cut.signals.holdLatencyP99Ms).toBe(1500);
    expect(cut.newRate).toBeLessThan(cut.oldRate);
  });

  it('treats unreadable signals as a breach', async ({ h, tenant: t }) => {
    const { eventId } = await scheduledEvent(h, t.manager, { opensInMs: 0, onsaleInMs: 1000, maxReleaseRate: 100 });
    h.clock.advance(1000);
    await runSchedulerTick(h.services);
    await runControllerTick(h.services, { source: async () => Promise.reject(new Error('connection refused')) });
    expect(await rateOf(h, t, eventId)).toBe(12.5);
  });

  it("slows down, not fails, when a real cell's signals are missing: its broker frozen, then its database down", async ({
    h,
    tenant: t,
  }) => {
    const { eventId } = await scheduledEvent(h, t.manager, { opensInMs: 0, onsaleInMs: 1000, maxReleaseRate: 100 });
    h.clock.advance(1000);
    await runSchedulerTick(h.services);
    expect(await rateOf(h, t, eventId)).toBe(25);

    const identity = await startIdentity();
    const cell = await startTestCell(identity, { cellId: 'cell-blind' });
    const frozenBroker = await startSilentPort();
    const proxy = await startPgProxy(cell.db.url);
    const api = await startCellApiOn(cell, identity, proxy.url, { KAFKA_BROKERS: `127.0.0.1:${frozenBroker.port}` });
    try {
      // The controller reads this cell as it reads any: over HTTP, within the signals budget.
      const client = createHttpCellClient({ token: cell.internalToken, timeoutMs: 2_000 });
      const source = () => client.signals({ id: cell.cellId, baseUrl: api.url });

      // The broker does not answer: the lag is unknown, and an unknown lag is a reason to slow down.
      h.clock.advance(5000);
      // The tick decides for every event on sale in this file's control plane: this test's is the one read here.
      const blind = (await runControllerTick(h.services, { source })).find((d) => d.eventId === eventId);
      expect(blind).toMatchObject({ eventId, oldRate: 25, newRate: 12.5 });
      expect(blind!.reason).toMatch(/consumerLag unknown/);

      // The database is down too: the cell answers 503, the signals are missing, R comes down again.
      proxy.down();
      h.clock.advance(5000);
      const dark = (await runControllerTick(h.services, { source })).find((d) => d.eventId === eventId);
      expect(dark).toMatchObject({
        eventId,
        oldRate: 12.5,
        newRate: 6.25,
        reason: 'decrease: cell signals unavailable',
      });
      const d = await h.req('GET', `/events/${eventId}/release-decisions?limit=10`, { token: t.viewer });
      expect(d.body.decisions[0]).toMatchObject({ signals: { unavailable: true }, newRate: 6.25 });
    } finally {
      await api.close();
      await proxy.close();
      await frozenBroker.close();
      await cell.close();
      await identity.close();
    }
  });

  it('operators pause, pin and resume R; each is recorded', async ({ h, fakeCell: cell, tenant: t }) => {
    const { eventId } = await scheduledEvent(h, t.manager, { opensInMs: 0, onsaleInMs: 1000, maxReleaseRate: 100 });
    h.clock.advance(1000);
    await runSchedulerTick(h.services);
    const pause = await h.req('PUT', `/operator/events/${eventId}/release`, {
      token: h.operatorToken,
      body: { mode: 'paused', reason: 'payment provider incident' },
    });
    expect(pause.body).toMatchObject({ mode: 'paused', rate: 0 });
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('paused');
    await tick(h);
    const buyer = await h.buyer('ctl-b');
    await h.req('POST', `/events/${eventId}/queue`, { token: buyer });
    expect((await h.req('GET', `/events/${eventId}/queue/me`, { token: buyer })).body).toMatchObject({
      paused: true,
      releaseRate: 0,
    });

    const pin = await h.req('PUT', `/operator/events/${eventId}/release`, {
      token: h.operatorToken,
      body: { mode: 'pinned', rate: 500 },
    });
    expect(pin.body).toMatchObject({ mode: 'pinned', rate: 100 }); // within the promoter's ceiling
    cell.signals.lockWaits = 999;
    await tick(h);
    expect(await rateOf(h, t, eventId)).toBe(100);
    cell.signals.lockWaits = 0;
    const resume = await h.req('PUT', `/operator/events/${eventId}/release`, {
      token: h.operatorToken,
      body: { mode: 'auto' },
    });
    expect(resume.body.mode).toBe('auto');
    expect((await h.req('GET', `/events/${eventId}`, { token: t.viewer })).body.status).toBe('on_sale');
    const d = await h.req('GET', `/operator/events/${eventId}/release-decisions`, { token: h.operatorToken });
    const reasons = d.body.decisions.map((x: { reason: string }) => x.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([
        'paused by operator: payment provider incident',
        'pinned by operator',
        'resumed by operator',
      ]),
    );
  });

  it("a promoter's decisions show the cell's health and their own event's seats, nothing of another tenant's event on the cell", async ({
    h,
    fakeCell: cell,
    tenant: t,
  }) => {
    const rival = await h.tenant('Rival');
    const ours = await scheduledEvent(h, t.manager, { opensInMs: 0, onsaleInMs: 1000, cellId: 'cell-ctl' });
    const theirs = await scheduledEvent(h, rival.manager, { opensInMs: 0, onsaleInMs: 1000, cellId: 'cell-ctl' });
    h.clock.advance(1000);
    await runSchedulerTick(h.services);
    cell.signals.availableSeats = { [ours.eventId]: 1983, [theirs.eventId]: 3 };
    cell.signals.holdLatencyP99Ms = 120;
    try {
      await tick(h);
      // The rival's event is not ours to read, and its decisions tell us nothing of it either.
      expect((await h.req('GET', `/events/${theirs.eventId}`, { token: t.owner })).status).toBe(404);
      const mine = await h.req('GET', `/events/${ours.eventId}/release-decisions?limit=1`, { token: t.owner });
      expect(mine.status).toBe(200);
      expect(JSON.stringify(mine.body)).not.toContain(theirs.eventId);
      expect(mine.body.decisions[0]).toMatchObject({ cellId: 'cell-ctl', actor: 'controller' });
      expect(mine.body.decisions[0].signals).toMatchObject({
        cellId: 'cell-ctl',
        holdLatencyP99Ms: 120,
        lockWaits: 0,
        availableSeats: { [ours.eventId]: 1983 },
      });
      expect(Object.keys(mine.body.decisions[0].signals.availableSeats)).toEqual([ours.eventId]);
      // The same holds the other way round, and for the operator's view of one event.
      const theirsSeen = await h.req('GET', `/events/${theirs.eventId}/release-decisions?limit=1`, {
        token: rival.owner,
      });
      expect(JSON.stringify(theirsSeen.body)).not.toContain(ours.eventId);
      expect(theirsSeen.body.decisions[0].signals.availableSeats).toEqual({ [theirs.eventId]: 3 });
      const operator = await h.req('GET', `/operator/events/${ours.eventId}/release-decisions?limit=1`, {
        token: h.operatorToken,
      });
      expect(operator.body.decisions[0].signals.availableSeats).toEqual({ [ours.eventId]: 1983 });
    } finally {
      cell.signals.availableSeats = {};
    }
  });

  it('decide() is AIMD within [floor, ceiling]', ({ h, fakeCell: cell }) => {
    const thresholds = thresholdsFrom(h.config);
    const base = {
      mode: 'auto' as const,
      pinnedRate: null,
      floor: 2,
      ceiling: 10,
      thresholds,
      increaseFraction: 0.05,
      decreaseFactor: 0.5,
    };
    const ok = { ...cell.signals, holdLatencyP99Ms: null, commitLatencyP99Ms: null };
    expect(decide({ ...base, current: 9.5, signals: ok }).rate).toBe(10);
    expect(decide({ ...base, current: 10, signals: ok }).reason).toMatch(/ceiling/);
    expect(decide({ ...base, current: 3, signals: { ...ok, connectionUse: 0.95 } }).rate).toBe(2);
  });
});
