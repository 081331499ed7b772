import {
  type ApplicationAutoScalingClient,
  DeleteScheduledActionCommand,
  ObjectNotFoundException,
  PutScheduledActionCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { and, eq, inArray, lte, or, sql } from 'drizzle-orm';
import type { Services } from '../context';
import { type Prewarm, type PrewarmWindow, prewarms } from '../db/schema';
import type { PrewarmTarget } from './config';
import { overlapping } from './record';

/** Application Auto Scaling's client for a region: each cell's services live in the cell's region. */
export type ScalingClients = (region: string) => ApplicationAutoScalingClient;

const ECS_DESIRED_COUNT = { ServiceNamespace: 'ecs', ScalableDimension: 'ecs:service:DesiredCount' } as const;
const PHASES = ['scale-out', 'scale-in'] as const;
type Phase = (typeof PHASES)[number];

/**
 * An action's name is the onsale's and the phase's, the same on every target: a retry or a second sync of the same
 * version overwrites the action PutScheduledAction made before (it creates or updates by name), never adds one.
 */
export const prewarmActionName = (eventId: string, phase: Phase) => `onsale-${eventId}-${phase}`;

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, Application Auto Scaling's one-time schedule. */
const atExpression = (iso: string) => `at(${iso.slice(0, 19)})`;

/** The targets of the control plane's roles (router, waiting room) and of one cell's. */
function targetsOf(targets: readonly PrewarmTarget[], cellId: string | null, scope: 'cell' | 'all'): PrewarmTarget[] {
  return targets.filter((t) => (t.cell === undefined ? scope === 'all' : t.cell === cellId));
}

/** The windows in force at `at` on a target: the control plane's targets serve every onsale, a cell's only its own. */
const inForce = (target: PrewarmTarget, at: string, windows: readonly PrewarmWindow[]) =>
  windows.filter(
    (w) => w.scaleOutAt <= at && at < w.scaleInAt && (target.cell === undefined || target.cell === w.cellId),
  );

/**
 * What a target must hold at `at`: the largest of the windows then in force, never below the stacks' own sizing (a
 * small plan must not cap what target tracking may add during an onsale), and the sizing itself when none is.
 */
function capacityAt(target: PrewarmTarget, at: string, windows: readonly PrewarmWindow[]) {
  let MinCapacity = target.min;
  let MaxCapacity = target.max;
  for (const w of inForce(target, at, windows)) {
    MinCapacity = Math.max(MinCapacity, w.capacity[target.role].min);
    MaxCapacity = Math.max(MaxCapacity, w.capacity[target.role].max);
  }
  return { MinCapacity, MaxCapacity };
}

async function putActions(
  clients: ScalingClients,
  eventId: string,
  window: PrewarmWindow,
  others: readonly PrewarmWindow[],
  target: PrewarmTarget,
) {
  // The scale-in gives back what the other onsales then warm still need, else the stacks' sizing.
  const actions: Record<Phase, { at: string; capacity: { MinCapacity: number; MaxCapacity: number } }> = {
    'scale-out': { at: window.scaleOutAt, capacity: capacityAt(target, window.scaleOutAt, [window, ...others]) },
    'scale-in': { at: window.scaleInAt, capacity: capacityAt(target, window.scaleInAt, others) },
  };
  for (const phase of PHASES) {
    await clients(target.region).send(
      new PutScheduledActionCommand({
        ...ECS_DESIRED_COUNT,
        ResourceId: target.resourceId,
        ScheduledActionName: prewarmActionName(eventId, phase),
        Schedule: atExpression(actions[phase].at),
        Timezone: 'UTC',
        ScalableTargetAction: actions[phase].capacity,
      }),
    );
  }
}

async function deleteActions(clients: ScalingClients, eventId: string, target: PrewarmTarget) {
  for (const phase of PHASES) {
    try {
      await clients(target.region).send(
        new DeleteScheduledActionCommand({
          ...ECS_DESIRED_COUNT,
          ResourceId: target.resourceId,
          ScheduledActionName: prewarmActionName(eventId, phase),
        }),
      );
    } catch (err) {
      // Already gone (an earlier attempt deleted it, or it was never put): what a delete wants.
      if (!(err instanceof ObjectNotFoundException)) throw err;
    }
  }
}

/**
 * Makes AWS's scheduled actions match one pre-warm: a live window puts both actions on the control plane's targets
 * and its cell's, sized with the windows it overlaps; a cell it left (an evacuation) and, once cancelled, every
 * target it was on lose them. Every call is idempotent, so a sync cut short is simply run again.
 */
async function apply(ctx: Services, clients: ScalingClients, row: Prewarm) {
  const targets = ctx.config.PREWARM_TARGETS ?? [];
  const { window } = row;
  const others = row.cancelled
    ? []
    : (await ctx.db.select({ window: prewarms.window }).from(prewarms).where(overlapping(row.eventId, window))).map(
        (r) => r.window,
      );
  const left = row.appliedCellId !== null && (row.cancelled || row.appliedCellId !== window.cellId);
  if (left) for (const t of targetsOf(targets, row.appliedCellId, 'cell')) await deleteActions(clients, row.eventId, t);
  for (const t of targetsOf(targets, window.cellId, 'all')) {
    if (row.cancelled) await deleteActions(clients, row.eventId, t);
    else await putActions(clients, row.eventId, window, others, t);
  }
}

const LEASE_MS = 60_000;
const backoff = (ctx: Services, attempts: number) =>
  Math.min(ctx.config.PREWARM_RETRY_MAX_MS, ctx.config.PREWARM_RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));

/**
 * One pass of the pre-warm sync (the worker's `prewarm` tick): claims the pre-warms whose schedule changed (or whose
 * last sync failed and is due again, or whose syncer died) with a lease, so two workers never sync the same one at
 * once, and makes AWS match each. A success is recorded only against the version synced: a reschedule meanwhile
 * leaves the row pending, and the next pass moves the actions again.
 */
export async function syncDuePrewarms(ctx: Services, clients: ScalingClients, limit = 20) {
  const now = ctx.clock.now();
  const claimed = await ctx.db
    .update(prewarms)
    .set({ status: 'syncing', leaseUntil: new Date(now.getTime() + LEASE_MS) })
    .where(
      inArray(
        prewarms.eventId,
        ctx.db
          .select({ eventId: prewarms.eventId })
          .from(prewarms)
          .where(
            or(
              and(inArray(prewarms.status, ['pending', 'failed']), lte(prewarms.nextAttemptAt, now)),
              and(eq(prewarms.status, 'syncing'), lte(prewarms.leaseUntil, now)),
            ),
          )
          .limit(limit)
          .for('update', { skipLocked: true }),
      ),
    )
    .returning();
  const summary = { synced: 0, failed: 0 };
  for (const row of claimed) {
    const mine = and(eq(prewarms.eventId, row.eventId), eq(prewarms.status, 'syncing'));
    try {
      await apply(ctx, clients, row);
      await ctx.db
        .update(prewarms)
        .set({
          status: sql`case when ${prewarms.version} = ${row.version} then 'synced' else 'pending' end`,
          nextAttemptAt: ctx.clock.now(),
          appliedCellId: row.cancelled ? null : row.window.cellId,
          attempts: 0,
          lastError: null,
          leaseUntil: null,
          syncedAt: ctx.clock.now(),
        })
        .where(mine);
      summary.synced++;
      ctx.log.info(row.cancelled ? 'pre-warm actions deleted' : 'pre-warm actions scheduled', {
        eventId: row.eventId,
        cellId: row.window.cellId,
        scaleOutAt: row.window.scaleOutAt,
        scaleInAt: row.window.scaleInAt,
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const attempts = row.attempts + 1;
      const next = new Date(ctx.clock.now().getTime() + backoff(ctx, attempts));
      await ctx.db
        .update(prewarms)
        .set({ status: 'failed', attempts, lastError: message.slice(0, 1000), nextAttemptAt: next, leaseUntil: null })
        .where(mine);
      summary.failed++;
      ctx.log.warn('pre-warm sync failed; will retry', { eventId: row.eventId, attempts, error: message });
    }
  }
  return summary;
}
