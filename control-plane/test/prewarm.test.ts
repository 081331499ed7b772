import { randomBytes } from 'node:crypto';
import {
  type ApplicationAutoScalingClient,
  DescribeScheduledActionsCommand,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { CreateClusterCommand, CreateServiceCommand, ECSClient } from '@aws-sdk/client-ecs';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { prewarms } from '../src/db/schema';
import { scalingClients } from '../src/prewarm/clients';
import type { PrewarmTarget } from '../src/prewarm/config';
import { movePrewarm } from '../src/prewarm/record';
import { prewarmActionName, syncDuePrewarms } from '../src/prewarm/sync';

/**
 * The pre-warm against moto's server (scripts/services starts it; services.env names it in
 * AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING): the actions are real Application Auto Scaling scheduled actions on ECS
 * scalable targets, read back with DescribeScheduledActions.
 */
const endpoint = process.env.AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING;
if (!endpoint) throw new Error('AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING is unset: run `scripts/services up` (moto)');
const REGION = 'eu-west-1';
const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
const clients = scalingClients({ credentials });
const aas: ApplicationAutoScalingClient = clients(REGION);

// moto keeps its state across runs: every run has clusters of its own.
const run = randomBytes(3).toString('hex');
const cpCluster = `onsale-cp-${run}`;
const cellCluster = (cell: string) => `onsale-${cell}-${run}`;
const target = (
  role: PrewarmTarget['role'],
  cluster: string,
  service: string,
  min: number,
  max: number,
  cell?: string,
) => ({ role, cell, region: REGION, resourceId: `service/${cluster}/${service}`, min, max }) satisfies PrewarmTarget;
const TARGETS: PrewarmTarget[] = [
  target('router', cpCluster, 'router', 3, 40),
  target('waitingRoom', cpCluster, 'api', 2, 10),
  ...['pw1', 'pw2'].flatMap((cell) => [
    target('cellApi', cellCluster(cell), 'api', 3, 30, cell),
    target('cellWorkers', cellCluster(cell), 'saga', 2, 12, cell),
    target('cellWorkers', cellCluster(cell), 'payment', 2, 12, cell),
  ]),
];
const DEFAULTS = {
  router: { min: 12, max: 40 },
  waitingRoom: { min: 6, max: 10 },
  cellApi: { min: 12, max: 30 },
  cellWorkers: { min: 6, max: 12 },
};

// Each test's onsales on days of their own: the control plane's targets serve every onsale, so windows that met
// would size one another's actions (the overlap test shows that on purpose).
const DAY = 86_400_000;

let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;

/** The stacks' ECS services and scalable targets, as the stacks declare them, in moto. */
async function declareTargets() {
  const ecs = new ECSClient({ region: REGION, endpoint, credentials });
  for (const cluster of new Set(TARGETS.map((x) => x.resourceId.split('/')[1]!))) {
    await ecs.send(new CreateClusterCommand({ clusterName: cluster }));
  }
  for (const x of TARGETS) {
    const [, cluster, service] = x.resourceId.split('/');
    await ecs.send(new CreateServiceCommand({ cluster, serviceName: service, desiredCount: 0 }));
    await aas.send(
      new RegisterScalableTargetCommand({
        ServiceNamespace: 'ecs',
        ScalableDimension: 'ecs:service:DesiredCount',
        ResourceId: x.resourceId,
        MinCapacity: x.min,
        MaxCapacity: x.max,
      }),
    );
  }
}

/** This onsale's actions on one target, by phase. */
async function actionsOn(resourceId: string, eventId: string) {
  const r = await aas.send(new DescribeScheduledActionsCommand({ ServiceNamespace: 'ecs', ResourceId: resourceId }));
  const mine = (r.ScheduledActions ?? []).filter((a) => a.ScheduledActionName?.startsWith(`onsale-${eventId}-`));
  return mine.map((a) => ({
    name: a.ScheduledActionName,
    schedule: a.Schedule,
    min: a.ScalableTargetAction?.MinCapacity,
    max: a.ScalableTargetAction?.MaxCapacity,
  }));
}

const at = (ms: number) => `at(${new Date(ms).toISOString().slice(0, 19)})`;

/** What every target of the control plane and of `cell` must hold for a window (the defaults unless given). */
async function expectWindow(
  eventId: string,
  cell: string,
  o: { opensAt: number; onsaleAt: number; capacity?: Partial<typeof DEFAULTS> },
) {
  const plan = { ...DEFAULTS, ...o.capacity };
  for (const x of TARGETS.filter((y) => y.cell === undefined || y.cell === cell)) {
    const warm = plan[x.role];
    expect(await actionsOn(x.resourceId, eventId), x.resourceId).toEqual(
      expect.arrayContaining([
        {
          name: prewarmActionName(eventId, 'scale-out'),
          schedule: at(o.opensAt - 1800_000),
          min: Math.max(warm.min, x.min),
          max: Math.max(warm.max, x.max),
        },
        { name: prewarmActionName(eventId, 'scale-in'), schedule: at(o.onsaleAt + 3600_000), min: x.min, max: x.max },
      ]),
    );
    expect(await actionsOn(x.resourceId, eventId), x.resourceId).toHaveLength(2);
  }
}

async function prewarmRow(eventId: string) {
  const [row] = await h.services.db.select().from(prewarms).where(eq(prewarms.eventId, eventId));
  return row!;
}

beforeAll(async () => {
  await declareTargets();
  h = await createHarness({
    env: {
      PREWARM_TARGETS: JSON.stringify(TARGETS),
      PREWARM_LEAD_SECONDS: '1800',
      PREWARM_HOLD_SECONDS: '3600',
      PREWARM_DEFAULT_CAPACITY: JSON.stringify(DEFAULTS),
    },
  });
  await addCell(h, 'pw1');
  await addCell(h, 'pw2');
  t = await h.tenant();
});
afterAll(async () => {
  await h?.close();
});

describe('an onsale schedules its capacity as Application Auto Scaling scheduled actions', () => {
  it('schedule puts them on the cell’s and the control plane’s targets; reschedule moves them; cancel deletes them', async () => {
    const now = h.clock.now().getTime();
    const opensAt = now + 2 * DAY + 3 * 3600_000;
    const onsaleAt = now + 2 * DAY + 4 * 3600_000;
    const { eventId } = await scheduledEvent(h, t.manager, {
      cellId: 'pw1',
      opensInMs: opensAt - now,
      onsaleInMs: onsaleAt - now,
    });
    // Nothing on AWS inside the request: the worker's sync puts it there.
    expect(await actionsOn(`service/${cellCluster('pw1')}/api`, eventId)).toEqual([]);
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 1, failed: 0 });
    await expectWindow(eventId, 'pw1', { opensAt, onsaleAt });
    // The other cell's services are not raised for it.
    expect(await actionsOn(`service/${cellCluster('pw2')}/api`, eventId)).toEqual([]);
    expect(await prewarmRow(eventId)).toMatchObject({ status: 'synced', appliedCellId: 'pw1' });
    // The promoter sees it with the onsale.
    const shown = await h.req('GET', `/events/${eventId}/onsale`, { token: t.viewer });
    expect(shown.body.prewarm).toMatchObject({
      status: 'synced',
      cellId: 'pw1',
      scaleOutAt: new Date(opensAt - 1800_000).toISOString(),
      scaleInAt: new Date(onsaleAt + 3600_000).toISOString(),
      capacity: DEFAULTS,
      lastError: null,
    });
    // Synced: the next pass has nothing to do.
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 0, failed: 0 });

    // Rescheduled a day later, with a capacity plan's figures for the cell's API.
    const later = { opensAt: opensAt + 86_400_000, onsaleAt: onsaleAt + 86_400_000 };
    const moved = await h.req('PUT', `/events/${eventId}/onsale`, {
      token: t.manager,
      body: {
        roomOpensAt: new Date(later.opensAt).toISOString(),
        onsaleAt: new Date(later.onsaleAt).toISOString(),
        perBuyerLimit: 4,
        maxReleaseRate: 100,
        capacity: { cellApi: { min: 20, max: 50 } },
      },
    });
    expect(moved.status).toBe(200);
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 1, failed: 0 });
    await expectWindow(eventId, 'pw1', { ...later, capacity: { cellApi: { min: 20, max: 50 } } });

    const cancelled = await h.req('POST', `/events/${eventId}/onsale/cancel`, { token: t.manager });
    expect(cancelled.body).toMatchObject({ eventId, status: 'draft' });
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 1, failed: 0 });
    for (const x of TARGETS) expect(await actionsOn(x.resourceId, eventId), x.resourceId).toEqual([]);
    expect(await prewarmRow(eventId)).toMatchObject({ status: 'synced', cancelled: true, appliedCellId: null });
  });

  it('an evacuation moves the actions with the event: off the cell it left, onto the target’s services', async () => {
    const now = h.clock.now().getTime();
    const opensAt = now + 5 * DAY + 7 * 3600_000;
    const onsaleAt = now + 5 * DAY + 8 * 3600_000;
    const { eventId } = await scheduledEvent(h, t.manager, {
      cellId: 'pw1',
      opensInMs: opensAt - now,
      onsaleInMs: onsaleAt - now,
    });
    await syncDuePrewarms(h.services, clients);
    await expectWindow(eventId, 'pw1', { opensAt, onsaleAt });
    // What the evacuation's flip records in its transaction (evacuation/move.ts).
    await h.services.db.transaction((tx) => movePrewarm(tx, eventId, 'pw2', h.clock.now()));
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 1, failed: 0 });
    for (const x of TARGETS.filter((y) => y.cell === 'pw1'))
      expect(await actionsOn(x.resourceId, eventId), x.resourceId).toEqual([]);
    await expectWindow(eventId, 'pw2', { opensAt, onsaleAt });
    expect(await prewarmRow(eventId)).toMatchObject({ status: 'synced', appliedCellId: 'pw2' });
  });

  it('a sync run again (a worker that died before recording it) overwrites the actions, never adds any', async () => {
    const now = h.clock.now().getTime();
    const opensAt = now + 7 * DAY + 5 * 3600_000;
    const onsaleAt = now + 7 * DAY + 6 * 3600_000;
    const { eventId } = await scheduledEvent(h, t.manager, {
      cellId: 'pw2',
      opensInMs: opensAt - now,
      onsaleInMs: onsaleAt - now,
    });
    await syncDuePrewarms(h.services, clients);
    // The worker put the actions and died before recording it: the claim's lease runs out and another takes it.
    await h.services.db
      .update(prewarms)
      .set({ status: 'syncing', leaseUntil: new Date(h.clock.now().getTime() - 1000) })
      .where(eq(prewarms.eventId, eventId));
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 1, failed: 0 });
    await expectWindow(eventId, 'pw2', { opensAt, onsaleAt });
  });

  it('a reschedule while a sync is under way leaves the row pending, and the next pass moves the actions', async () => {
    const now = h.clock.now().getTime();
    const { eventId } = await scheduledEvent(h, t.manager, {
      cellId: 'pw1',
      opensInMs: 9 * DAY + 3600_000,
      onsaleInMs: 9 * DAY + 7200_000,
    });
    const before = await prewarmRow(eventId);
    // A sync holds the row (its lease) when the promoter reschedules.
    await h.services.db
      .update(prewarms)
      .set({ status: 'syncing', leaseUntil: new Date(now + 60_000) })
      .where(eq(prewarms.eventId, eventId));
    const later = { opensAt: now + 9 * DAY + 2 * 3600_000, onsaleAt: now + 9 * DAY + 3 * 3600_000 };
    await h.req('PUT', `/events/${eventId}/onsale`, {
      token: t.manager,
      body: {
        roomOpensAt: new Date(later.opensAt).toISOString(),
        onsaleAt: new Date(later.onsaleAt).toISOString(),
        perBuyerLimit: 4,
        maxReleaseRate: 100,
      },
    });
    // Still the running sync's: no second syncer may take it meanwhile.
    expect(await prewarmRow(eventId)).toMatchObject({ status: 'syncing', version: before.version + 1 });
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 0, failed: 0 });
    h.clock.advance(61_000);
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 1, failed: 0 });
    await expectWindow(eventId, 'pw1', later);
  });

  it('two onsales warm at once on one cell: each one’s actions hold what the other then needs', async () => {
    const now = h.clock.now().getTime();
    const hour = 3600_000;
    const schedule = (eventId: string, opensAt: number, capacity: Record<string, { min: number; max: number }>) =>
      h.req('PUT', `/events/${eventId}/onsale`, {
        token: t.manager,
        body: {
          roomOpensAt: new Date(opensAt).toISOString(),
          onsaleAt: new Date(opensAt + hour).toISOString(),
          perBuyerLimit: 4,
          maxReleaseRate: 100,
          capacity,
        },
      });
    // A: warm from 9.5 h to 11.5 h into the day (lead 30 min, hold 1 h); B: from 10.5 h to 12.5 h.
    const a = await scheduledEvent(h, t.manager, {
      cellId: 'pw1',
      opensInMs: 11 * DAY + 10 * hour,
      onsaleInMs: 11 * DAY + 11 * hour,
    });
    const b = await scheduledEvent(h, t.manager, {
      cellId: 'pw1',
      opensInMs: 11 * DAY + 11 * hour,
      onsaleInMs: 11 * DAY + 12 * hour,
    });
    expect((await schedule(a.eventId, now + 11 * DAY + 10 * hour, { cellApi: { min: 20, max: 50 } })).status).toBe(200);
    expect((await schedule(b.eventId, now + 11 * DAY + 11 * hour, { cellApi: { min: 15, max: 35 } })).status).toBe(200);
    await syncDuePrewarms(h.services, clients);
    const api = `service/${cellCluster('pw1')}/api`;
    const byName = async (eventId: string) =>
      Object.fromEntries((await actionsOn(api, eventId)).map((x) => [x.name, { min: x.min, max: x.max }]));
    // B starts warming inside A: it keeps A's larger figures. A's scale-in, inside B, gives back B's, not the stacks'.
    expect(await byName(b.eventId)).toMatchObject({
      [prewarmActionName(b.eventId, 'scale-out')]: { min: 20, max: 50 },
      [prewarmActionName(b.eventId, 'scale-in')]: { min: 3, max: 30 },
    });
    expect(await byName(a.eventId)).toMatchObject({
      [prewarmActionName(a.eventId, 'scale-out')]: { min: 20, max: 50 },
      [prewarmActionName(a.eventId, 'scale-in')]: { min: 15, max: 35 },
    });
    // B cancelled: A, its neighbour, is synced again and its scale-in gives back the stacks' sizing.
    expect((await h.req('POST', `/events/${b.eventId}/onsale/cancel`, { token: t.manager })).status).toBe(200);
    expect(await prewarmRow(a.eventId)).toMatchObject({ status: 'pending' });
    await syncDuePrewarms(h.services, clients);
    expect(await actionsOn(api, b.eventId)).toEqual([]);
    expect(await byName(a.eventId)).toMatchObject({
      [prewarmActionName(a.eventId, 'scale-in')]: { min: 3, max: 30 },
    });
  });

  it('an AWS API that does not answer fails the sync, recorded with its error and retried later', async () => {
    const { eventId } = await scheduledEvent(h, t.manager, { cellId: 'pw1' });
    const unreachable = scalingClients({ credentials, endpoint: 'http://127.0.0.1:9', maxAttempts: 1 });
    expect(await syncDuePrewarms(h.services, unreachable)).toEqual({ synced: 0, failed: 1 });
    const row = await prewarmRow(eventId);
    expect(row).toMatchObject({ status: 'failed', attempts: 1 });
    expect(row.lastError).toBeTruthy();
    expect(row.nextAttemptAt.getTime()).toBeGreaterThan(h.clock.now().getTime());
    // Not due yet; once it is, the sync against the real API succeeds.
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 0, failed: 0 });
    h.clock.advance(h.config.PREWARM_RETRY_BASE_MS);
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 1, failed: 0 });
  });

  it('an evacuation flips a cell’s events side by side: their overlapping pre-warms all move, none deadlocks', async () => {
    const onsales = [];
    for (let i = 0; i < 6; i++)
      onsales.push(
        await scheduledEvent(h, t.manager, {
          cellId: 'pw1',
          opensInMs: 20 * DAY + i * 60_000,
          onsaleInMs: 20 * DAY + 3600_000,
        }),
      );
    await syncDuePrewarms(h.services, clients);
    for (const toCell of ['pw2', 'pw1', 'pw2']) {
      // What each event's flip records in its own transaction (evacuation/move.ts), all at once.
      const flips = await Promise.allSettled(
        onsales.map((o) => h.services.db.transaction((tx) => movePrewarm(tx, o.eventId, toCell, h.clock.now()))),
      );
      expect(flips.flatMap((f) => (f.status === 'rejected' ? [String(f.reason?.cause ?? f.reason)] : []))).toEqual([]);
      for (const o of onsales) expect((await prewarmRow(o.eventId)).window.cellId).toBe(toCell);
    }
    expect(await syncDuePrewarms(h.services, clients)).toEqual({ synced: 6, failed: 0 });
    for (const o of onsales)
      expect(await prewarmRow(o.eventId)).toMatchObject({ status: 'synced', appliedCellId: 'pw2' });
  });

  it('a capacity whose min exceeds its max is a 400 naming the field', async () => {
    const { eventId } = await scheduledEvent(h, t.manager, { cellId: 'pw1' });
    const now = h.clock.now().getTime();
    const r = await h.req('PUT', `/events/${eventId}/onsale`, {
      token: t.manager,
      body: {
        roomOpensAt: new Date(now + 60_000).toISOString(),
        onsaleAt: new Date(now + 120_000).toISOString(),
        perBuyerLimit: 4,
        maxReleaseRate: 100,
        capacity: { router: { min: 50, max: 10 } },
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_failed');
    expect(JSON.stringify(r.body.error.details)).toContain('capacity');
  });
});
