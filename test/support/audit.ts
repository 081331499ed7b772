import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createLogger } from '@onsale/contracts';
import { createHttpCellClient } from '@onsale/control-plane/cells/client';
import { createDb } from '@onsale/control-plane/db/client';
import type { MoverDeps } from '@onsale/control-plane/evacuation/move';
import { systemClock } from '@onsale/control-plane/lib/clock';
import { withRoomScripts } from '@onsale/control-plane/waiting-room/scripts';
import { Redis } from 'ioredis';
import { demoSeatMap } from '../../scripts/local-platform/demo';
import { repoRoot } from '../../scripts/local-platform/launch';
import type { TestDatabase } from './db';
import type { TestPlatform } from './platform';
import { serviceEnv } from './services';
import type { Shopper } from './shopper';
import { emulatorCharges, emulatorIntents } from './stripe';

/**
 * What the evacuation tests share: the audit (below), the buyers who keep buying through a move and
 * the pause they saw, and the operators' tool run exactly as the runbooks write it.
 *
 * The evacuation audit over every cell an event has lived in, from the cells' own tables and the
 * Stripe emulator's record of what it really did:
 *  - no seat has two tickets (not voided), across cells;
 *  - no seat has a live hold for a buyer's order in two cells (the target's placeholder holds that
 *    block seats for the source are not sales, and are checked by the last rule instead);
 *  - every order of the event is in a terminal state;
 *  - every ticketed order has exactly one ticket per seat it held;
 *  - captures kept = paid orders: the event's PaymentIntents whose captured money Stripe kept (not refunded in full)
 *    equal its ticketed orders, so every other capture was refunded in full (an order a failover's lost writer had
 *    paid, whose hold lapsed on the promoted one), and Stripe's capture counter equals the captured PaymentIntents
 *    (no second capture anywhere);
 *  - seats sold + seats free on the event's current cell = the seat map (nothing stuck held or blocked).
 */

const TERMINAL = ['ticketed', 'expired', 'released', 'failed', 'canceled', 'refunded'];
const PLACEHOLDER = 'evacuation_block';

export interface AuditCell {
  id: string;
  db: TestDatabase;
}

export interface AuditReport {
  seatsInMap: number;
  sold: number;
  free: number;
  ordersByStatus: Record<string, number>;
  ticketedOrders: number;
  /** The event's PaymentIntents whose captured money Stripe kept. */
  captures: number;
  violations: string[];
}

export async function auditEvent(o: {
  eventId: string;
  /** Every cell the event has been on. */
  cells: AuditCell[];
  /** The cell the directory names for the event now. */
  ownerCell: string;
  /** The Stripe emulator's base URL (its /__emulator control API). */
  stripeUrl: string;
}): Promise<AuditReport> {
  const violations: string[] = [];
  const ticketsPerSeat = new Map<string, number>();
  const liveHoldCells = new Map<string, string[]>();
  const ordersByStatus: Record<string, number> = {};
  const intents = new Set<string>();
  let ticketedOrders = 0;

  for (const cell of o.cells) {
    const tickets = await cell.db.query<{ seat_id: string }>(
      `SELECT t.seat_id FROM tickets t JOIN seats s ON s.id = t.seat_id
        WHERE s.event_id = $1 AND t.voided_at IS NULL`,
      [o.eventId],
    );
    for (const t of tickets) ticketsPerSeat.set(t.seat_id, (ticketsPerSeat.get(t.seat_id) ?? 0) + 1);

    const live = await cell.db.query<{ seat_id: string }>(
      `SELECT DISTINCT hs.seat_id FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id JOIN orders o ON o.id = h.order_id
        WHERE h.event_id = $1 AND hs.released_at IS NULL AND o.status <> $2
          AND o.status IN ('pending_payment', 'confirmed', 'paid', 'refunding')`,
      [o.eventId, PLACEHOLDER],
    );
    for (const h of live) liveHoldCells.set(h.seat_id, [...(liveHoldCells.get(h.seat_id) ?? []), cell.id]);

    const orders = await cell.db.query<{ id: string; status: string; seats: number; tickets: number }>(
      `SELECT o.id, o.status,
              (SELECT count(*)::int FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id WHERE h.order_id = o.id) AS seats,
              (SELECT count(*)::int FROM tickets t WHERE t.order_id = o.id AND t.voided_at IS NULL) AS tickets
         FROM orders o WHERE o.event_id = $1 AND o.status <> $2`,
      [o.eventId, PLACEHOLDER],
    );
    for (const r of orders) {
      ordersByStatus[r.status] = (ordersByStatus[r.status] ?? 0) + 1;
      if (!TERMINAL.includes(r.status)) violations.push(`order ${r.id} on ${cell.id} is ${r.status}, not terminal`);
      if (r.status === 'ticketed') {
        ticketedOrders++;
        if (r.tickets !== r.seats)
          violations.push(`order ${r.id} on ${cell.id} is ticketed with ${r.tickets} tickets for ${r.seats} seats`);
      } else if (r.tickets > 0) violations.push(`order ${r.id} on ${cell.id} is ${r.status} with ${r.tickets} tickets`);
    }
    const pays = await cell.db.query<{ payment_intent_id: string }>(
      'SELECT p.payment_intent_id FROM payments p JOIN orders o ON o.id = p.order_id WHERE o.event_id = $1',
      [o.eventId],
    );
    for (const p of pays) intents.add(p.payment_intent_id);
  }

  for (const [seat, n] of ticketsPerSeat) if (n > 1) violations.push(`seat ${seat} has ${n} tickets`);
  for (const [seat, where] of liveHoldCells)
    if (where.length > 1) violations.push(`seat ${seat} has live holds in ${where.join(' and ')}`);

  const all = await emulatorIntents(o.stripeUrl);
  const counters = (await (await fetch(`${o.stripeUrl}/__emulator/counters`)).json()) as { captures: number };
  const kept = new Set(
    (await emulatorCharges(o.stripeUrl))
      .filter((c) => c.amount_captured > c.amount_refunded)
      .map((c) => c.payment_intent),
  );
  const captures = [...intents].filter((id) => kept.has(id)).length;
  const capturedAnywhere = all.filter((pi) => pi.amount_received > 0).length;
  if (captures !== ticketedOrders)
    violations.push(`${captures} captures kept for ${ticketedOrders} paid (ticketed) orders`);
  if (counters.captures !== capturedAnywhere)
    violations.push(`Stripe counted ${counters.captures} captures for ${capturedAnywhere} captured PaymentIntents`);

  const owner = o.cells.find((c) => c.id === o.ownerCell);
  if (!owner) throw new Error(`the owner cell ${o.ownerCell} is not among the audited cells`);
  const [map] = await owner.db.query<{ n: number }>('SELECT count(*)::int AS n FROM seats WHERE event_id = $1', [
    o.eventId,
  ]);
  const [free] = await owner.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM seats s WHERE s.event_id = $1
        AND NOT EXISTS (SELECT 1 FROM hold_seats hs WHERE hs.seat_id = s.id AND hs.released_at IS NULL)
        AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.seat_id = s.id AND t.voided_at IS NULL)`,
    [o.eventId],
  );
  const sold = ticketsPerSeat.size;
  if (sold + free!.n !== map!.n)
    violations.push(`sold ${sold} + free ${free!.n} on ${o.ownerCell} ≠ ${map!.n} seats in the map`);

  return {
    seatsInMap: map!.n,
    sold,
    free: free!.n,
    ordersByStatus,
    ticketedOrders,
    captures,
    violations,
  };
}

/** The audit of every demo event of a platform, over all its cells, each against the cell the directory names. */
export async function auditAll(t: TestPlatform): Promise<{ eventId: string; audit: AuditReport }[]> {
  const out = [];
  for (const e of t.demo.events) {
    const audit = await auditEvent({
      eventId: e.eventId,
      cells: t.cells(),
      ownerCell: e.cellId,
      stripeUrl: t.platform.urls.stripe,
    });
    out.push({ eventId: e.eventId, audit });
  }
  return out;
}

/** One hold attempt of a buyer who keeps buying through an evacuation. */
export interface Attempt {
  at: number;
  status: number;
  code?: string;
  cell?: string;
  retryAfter?: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The buyer's client after `admission_cell_moved`: poll the waiting room until it hands an admission for another cell. */
export async function refreshAdmission(routerUrl: string, s: Shopper, eventId: string, oldCell: string) {
  for (let i = 0; i < 150; i++) {
    const res = await fetch(`${routerUrl}/events/${eventId}/queue/me`, {
      headers: { authorization: `Bearer ${s.bearer}` },
    });
    if (res.ok) {
      const me = (await res.json()) as { admission: { token: string; purchaseCell: string } | null };
      if (me.admission && me.admission.purchaseCell !== oldCell) return me.admission;
    }
    await sleep(100);
  }
  throw new Error(`${s.name}: no admission for the new cell`);
}

/**
 * A buyer who keeps holding one seat and releasing it again, as fast as the platform answers,
 * through an evacuation: a 503 is waited out, `admission_cell_moved` fetches a new admission, a
 * 409 on a seat moves to the next seat, a gateway timeout is retried with the same key. Anything
 * else fails the run.
 */
export function keepBuying(
  routerUrl: string,
  s: Shopper,
  eventId: string,
  seats: string[],
  fromCell: string,
  stop: { done: boolean },
) {
  const log: Attempt[] = [];
  let token = s.admission!.token;
  let cell = s.admission!.purchaseCell;
  const run = (async () => {
    let i = 0;
    let key = randomUUID();
    while (!stop.done) {
      const seat = seats[i % seats.length]!;
      const res = await s.hold([seat], key, token);
      const body = (await res.json()) as { orderId?: string; error?: { code: string } };
      log.push({
        at: Date.now(),
        status: res.status,
        code: body.error?.code,
        cell,
        retryAfter: res.headers.get('retry-after'),
      });
      if (res.status === 502 || res.status === 504) {
        // No answer in time (a loaded machine): a client retries with the same key and gets the same order.
        await sleep(200);
        continue;
      }
      key = randomUUID();
      if (res.status === 202) {
        for (let attempt = 0; ; attempt++) {
          const rel = await fetch(`${routerUrl}/events/${eventId}/orders/${body.orderId}/hold`, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${s.bearer}`, 'x-admission-token': token },
          });
          // A retry after a timed-out release that did go through finds the hold already released.
          if (rel.ok || (attempt > 0 && rel.status === 409)) break;
          if ((rel.status !== 502 && rel.status !== 504) || attempt >= 10)
            throw new Error(`${s.name}: release on ${cell} answered ${rel.status} ${await rel.text()}`);
          await sleep(200);
        }
        i++;
      } else if (res.status === 503) {
        await sleep(100);
      } else if (res.status === 409 && body.error?.code === 'admission_cell_moved') {
        const fresh = await refreshAdmission(routerUrl, s, eventId, fromCell);
        token = fresh.token;
        cell = fresh.purchaseCell;
      } else if (res.status === 409) {
        i++; // this seat is held or blocked elsewhere right now: try the next
      } else {
        throw new Error(`${s.name}: unexpected ${res.status} ${JSON.stringify(body)}`);
      }
    }
  })();
  return { log, run };
}

/**
 * The pause each buyer saw (last hold on the source to first hold on the target), how many
 * buyers saw a 503 and how many 503s there were, and any 503 that was neither `event_moving` with
 * Retry-After nor the router's `cell_unavailable` (there must be none).
 */
export function pauseReport(logs: Attempt[][], from: string, to: string) {
  const pauses = logs.map((log) => {
    const lastA = Math.max(...log.filter((a) => a.status === 202 && a.cell === from).map((a) => a.at));
    const firstB = Math.min(...log.filter((a) => a.status === 202 && a.cell === to).map((a) => a.at));
    return { gap: firstB - lastA, saw503: log.some((a) => a.status === 503) };
  });
  const all = logs.flat();
  const refused = all.filter((a) => a.status === 503);
  const gaps = pauses.map((p) => p.gap).sort((a, b) => a - b);
  return {
    pausesMs: pauses.map((p) => p.gap),
    maxPauseMs: Math.max(...gaps),
    medianPauseMs: gaps[Math.floor(gaps.length / 2)]!,
    buyers: logs.length,
    buyersWho503: pauses.filter((p) => p.saw503).length,
    responses503: refused.length,
    cellMovedRefusals: all.filter((a) => a.code === 'admission_cell_moved').length,
    holdsOnSource: all.filter((a) => a.status === 202 && a.cell === from).length,
    holdsOnTarget: all.filter((a) => a.status === 202 && a.cell === to).length,
    // The router's own breaker answers cell_unavailable when a cell is slow to answer (a loaded
    // machine), whatever the move does: counted apart, not an evacuation's answer.
    unavailable503: refused.filter((a) => a.code === 'cell_unavailable').length,
    wrong503: refused.filter((a) => a.code !== 'cell_unavailable' && (a.code !== 'event_moving' || !a.retryAfter)),
  };
}

/** The control plane's environment for the operators' tool, as an SRE's shell has it. */
function toolEnv(t: TestPlatform): NodeJS.ProcessEnv {
  const env = serviceEnv();
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LOG_LEVEL: 'warn',
    DATABASE_URL_CONTROL_PLANE: t.controlPlaneDb.url,
    REDIS_URL: env.REDIS_URL,
    REDIS_KEY_PREFIX: t.reportingPrefix.replace(/\/$/, ':'),
    IDENTITY_JWKS_URL: `${t.platform.urls.identity}/.well-known/jwks.json`,
    IDENTITY_ISSUER: 'onsale:dev-identity',
    IDENTITY_AUDIENCE: 'onsale:platform',
    CELL_INTERNAL_TOKEN: t.platform.internalToken,
    SIGNING_KEY_KEK: randomBytes(32).toString('base64'),
  };
}

/**
 * The mover's dependencies against a test platform's control plane, for tests that drive the move
 * in process (to crash it at a chosen step); `close()` ends its pool and Redis connection.
 */
export function testMover(t: TestPlatform): {
  deps: MoverDeps;
  pool: ReturnType<typeof createDb>['pool'];
  close(): Promise<void>;
} {
  const { db, pool } = createDb(t.controlPlaneDb.url, 4);
  const redis = withRoomScripts(new Redis(serviceEnv().REDIS_URL!));
  const deps: MoverDeps = {
    db,
    redis,
    prefix: t.reportingPrefix.replace(/\/$/, ':'),
    log: createLogger({ service: 'evacuation-test' }, 'warn'),
    clock: systemClock,
    cells: createHttpCellClient({ token: t.platform.internalToken, timeoutMs: 15_000 }),
    config: { WAITING_ROOM_SHARDS: 1, ADMISSION_CLAIM_WINDOW_SECONDS: 60 },
    pollMs: 100,
  };
  return {
    deps,
    pool,
    async close() {
      await pool.end();
      redis.disconnect();
    },
  };
}

/** Runs `pnpm --filter @onsale/control-plane evacuate <args>`: the runbooks' command, as written there. */
export function evacuateTool(
  t: TestPlatform,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'pnpm',
      ['--silent', '--filter', '@onsale/control-plane', 'evacuate', ...args],
      { cwd: repoRoot, env: toolEnv(t), timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export async function controlPlaneCall<T>(
  t: TestPlatform,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${t.platform.urls.controlPlane}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** One more event of the demo tenant on a cell, its seat map and an onsale open now, loaded (or, with `onsale: false`, a draft). */
export async function createOnsaleEvent(
  t: TestPlatform,
  cellId: string,
  name: string,
  seats: number,
  onsale = true,
): Promise<string> {
  const promoter = t.demo.promoter;
  const ev = await controlPlaneCall<{ id: string }>(t, 'POST', '/events', promoter, {
    name,
    venue: 'Hall',
    startsAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    cellId,
  });
  await controlPlaneCall(t, 'PUT', `/events/${ev.id}/seat-map`, promoter, demoSeatMap(seats));
  if (!onsale) return ev.id;
  const at = new Date(Date.now() + 1_000).toISOString();
  await controlPlaneCall(t, 'PUT', `/events/${ev.id}/onsale`, promoter, {
    roomOpensAt: at,
    onsaleAt: at,
    perBuyerLimit: 4,
    maxReleaseRate: 50,
    holdTtlSeconds: 30,
  });
  for (let i = 0; i < 240; i++) {
    const o = await controlPlaneCall<{ ready: boolean }>(t, 'GET', `/events/${ev.id}/onsale`, promoter);
    // Loaded, and routed: the edge router learns the event from its next directory poll.
    if (o.ready && (await fetch(`${t.platform.urls.router}/events/${ev.id}/availability`)).ok) return ev.id;
    await sleep(250);
  }
  throw new Error(`event ${ev.id} not loaded into ${cellId}, or not routed`);
}
