import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { EventLoad } from '@onsale/contracts';
import type { TestDatabase } from '../../test/support/db';
import type { startIdentity } from '../../test/support/identity';
import { eventLoad } from '../../test/support/seed';
import { repoRoot } from '../../test/support/services';
import type { keepAlivePool } from '../lib/http';
import { percentile, round, runPool } from '../lib/stats';

type Identity = Awaited<ReturnType<typeof startIdentity>>;

/** How the bench runs pgbench (its harness's exec, the binary, the clients). */
export interface GaPgbench {
  exec: (name: string, file: string, args: string[], options?: { cwd?: string }) => Promise<string>;
  binary: string;
  clients: number;
}

export interface GaPhaseOptions {
  identity: Identity;
  cellId: string;
  /** The client every phase of the hold bench sends through. */
  http: ReturnType<typeof keepAlivePool>;
  db: TestDatabase;
  loadEvent: (load: EventLoad) => Promise<EventLoad>;
  holds: number;
  concurrency: number;
  placesPerHold: number;
  pgbench: GaPgbench;
}

/**
 * GA holds per second on one hot area (every buyer takes places from the same area), twice in
 * the same run: the cell's layout (the area's count spread over stripes) and the same area
 * collapsed into one counter row (the CHECK-guarded single row the stripes replace). Capacity is
 * exactly what the holds take, so every hold of either phase should succeed and the last one
 * sells the area out: the area ends at 0, never below.
 */
export async function gaPhases(o: GaPhaseOptions) {
  return {
    http: { striped: await gaPhase(o, 'striped'), oneRow: await gaPhase(o, 'one-row') },
    // The same transaction without HTTP, as many clients as the cell's pool: where the row lock,
    // not the API process, is what limits (on a 2-core machine the HTTP path saturates the CPU first).
    pgbench: { striped: await gaPgbench(o, 'striped'), oneRow: await gaPgbench(o, 'one-row') },
  };
}

/** A hot GA area loaded into the cell, its count striped or collapsed into one row. */
async function hotArea(o: GaPhaseOptions, layout: 'striped' | 'one-row', capacity: number) {
  const areaId = randomUUID();
  const event = await o.loadEvent(
    eventLoad(0, {
      seats: [],
      tiers: [{ code: 'ga', name: 'Standing', price: 4_000, currency: 'eur', fee: 0, fees: 'included' }],
      gaAreas: [{ id: areaId, name: 'Floor', capacity, tier: 'ga' }],
    }),
  );
  if (layout === 'one-row') {
    await o.db.query('DELETE FROM ga_stripes WHERE area_id = $1 AND stripe > 0', [areaId]);
    await o.db.query('UPDATE ga_stripes SET capacity = $2, remaining = $2 WHERE area_id = $1', [areaId, capacity]);
  }
  const stripes = (await o.db.query('SELECT 1 FROM ga_stripes WHERE area_id = $1', [areaId])).length;
  return { areaId, event, stripes };
}

async function gaPgbench(o: GaPhaseOptions, layout: 'striped' | 'one-row') {
  const perClient = Math.floor(o.holds / o.pgbench.clients);
  const { areaId, event, stripes } = await hotArea(o, layout, perClient * o.pgbench.clients * o.placesPerHold);
  const work = mkdtempSync(join(tmpdir(), 'pgbench-ga-'));
  const script = join(work, 'ga.sql');
  writeFileSync(
    script,
    readFileSync(resolve(repoRoot, 'load-tests/holds/ga.pgbench.sql'), 'utf8')
      .replaceAll('{{CELL_ID}}', o.cellId)
      .replaceAll('{{EVENT_ID}}', event.eventId)
      .replaceAll('{{AREA_ID}}', areaId)
      .replaceAll('{{STRIPES}}', String(stripes)),
  );
  const args = ['-n', '-f', script, '-c', String(o.pgbench.clients), '-j', '2', '-t', String(perClient)];
  const output = await o.pgbench.exec(`pgbench GA ${layout}`, o.pgbench.binary, [...args, o.db.url], { cwd: work });
  const left = await o.db.query<{ n: number }>('SELECT sum(remaining)::int AS n FROM ga_stripes WHERE area_id = $1', [
    areaId,
  ]);
  return {
    stripes,
    holdsPerSecond: round(Number(/tps = ([\d.]+)/.exec(output)?.[1])),
    latencyAverageMs: round(Number(/latency average = ([\d.]+) ms/.exec(output)?.[1]), 2),
    placesLeft: left[0]!.n,
  };
}

async function gaPhase(o: GaPhaseOptions, layout: 'striped' | 'one-row') {
  const { areaId, event, stripes } = await hotArea(o, layout, o.holds * o.placesPerHold);
  // Tokens are minted before the clock starts, as for the seated phase.
  const buyers = await Promise.all(
    Array.from({ length: o.holds }, async (_, i) => {
      const userId = `bench-ga-${layout}-${i}`;
      return {
        bearer: await o.identity.buyerToken(userId),
        admission: await o.identity.admissionToken({ sub: userId, eventId: event.eventId, purchaseCell: o.cellId }),
      };
    }),
  );
  const statuses = new Map<number, number>();
  const body = JSON.stringify({ ga: [{ areaId, quantity: o.placesPerHold }] });
  const started = performance.now();
  const durations = await runPool(o.holds, o.concurrency, async (i) => {
    const res = await o.http.request(`/events/${event.eventId}/holds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${buyers[i]!.bearer}`,
        'x-admission-token': buyers[i]!.admission,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body,
    });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  });
  const seconds = (performance.now() - started) / 1000;
  const left = await o.db.query<{ n: number }>('SELECT sum(remaining)::int AS n FROM ga_stripes WHERE area_id = $1', [
    areaId,
  ]);
  return {
    stripes,
    holds: statuses.get(202) ?? 0,
    statuses: Object.fromEntries(statuses),
    holdsPerSecond: round((statuses.get(202) ?? 0) / seconds),
    p50Ms: round(percentile(durations, 50), 2),
    p99Ms: round(percentile(durations, 99), 2),
    placesLeft: left[0]!.n,
  };
}
