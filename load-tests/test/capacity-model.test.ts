import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ManifestSchema } from '@onsale/infra/manifest';
import { describe, expect, it, onTestFinished } from 'vitest';
import { figuresFrom, lastReportFile, type MeasuredFigures, MissingFigures } from '../capacity/figures';
import {
  ASSUMPTIONS,
  databaseClassFor,
  manifestFragment,
  perAdmittedBuyer,
  plan,
  rampedRate,
  releaseRateFor,
  simulate,
  tasksFor,
} from '../capacity/model';
import { Onsale } from '../capacity/onsale';

/** Round figures, so every expectation below can be worked out by hand. */
const figures: MeasuredFigures = {
  source: { file: 'fixture', date: '2026-12-04', commit: 'test', machine: {} },
  hold: { cellApi: 2, postgres: 1.5 },
  routerForward: { router: 0.5 },
  nginxForward: { nginx: 0.1 },
  join: { controlPlaneApi: 0.3, redis: 0.05 },
  poll: { controlPlaneApi: 0.2, redis: 0.04 },
  relayEvent: { relay: 0.1, kafka: 0.2, postgres: 0.02 },
  redisBytesPerQueuedBuyer: 150,
  holdP99AtHalfRate: { ms: 20, perSecond: 300 },
};

const stadium = Onsale.parse({
  name: 'stadium',
  registeredBuyers: 100_000,
  arrival: [{ seconds: 60, share: 1 }],
  pollIntervalSeconds: 5,
  events: [{ id: 'stadium', seats: 20_000, holdTtlSeconds: 600, seatsPerOrder: 2.4 }],
  conversion: 0.8,
  abandonment: 0.1,
  holdAttemptsPerBuyer: 1.3,
  paymentSeconds: 120,
  targetSellOutSeconds: 180,
});

describe('the arithmetic', () => {
  it('sizes tasks to the plan utilization and never below the minimum', () => {
    expect(tasksFor(0.5, 1, 3)).toBe(3);
    expect(tasksFor(10, 1, 3)).toBe(17); // 10 cores at 0.6 of each
    expect(tasksFor(10, 0.5, 2)).toBe(34);
  });

  it('picks the smallest database class whose cores carry the load at the plan utilization', () => {
    expect(databaseClassFor(1.2)).toBe('db.r7g.large'); // 2 vCPU × 0.6
    expect(databaseClassFor(1.21)).toBe('db.r7g.xlarge');
    expect(databaseClassFor(1_000)).toBe('db.r7g.16xlarge');
  });

  it('counts, per admitted buyer, the hold requests, Kafka events and PostgreSQL time', () => {
    const per = perAdmittedBuyer(stadium, figures);
    expect(per.holds).toBeCloseTo(0.9 * 1.3);
    expect(per.kafkaEvents).toBeCloseTo(0.8 * 8 + 0.1 * 2);
    expect(per.postgresMs).toBeCloseTo(1.17 * 1.5 + 6.6 * 0.02);
  });

  it('sets R to sell out by the target less the payment time, within the cell ceiling', () => {
    expect(releaseRateFor({ ...stadium, targetSellOutSeconds: 600 }, 10_000, 1_000)).toEqual({
      wanted: 21, // 10,000 over 480 s
      rate: 21,
      capped: false,
    });
    expect(releaseRateFor({ ...stadium, targetSellOutSeconds: 600 }, 10_000, 15.5)).toEqual({
      wanted: 21,
      rate: 15,
      capped: true,
    });
  });

  it('ramps R as the release controller does: a quarter of it first, then up a step every tick', () => {
    expect(rampedRate(40, 0)).toBe(10);
    expect(rampedRate(40, 4.9)).toBe(10);
    expect(rampedRate(40, 5)).toBe(12); // + max(1, 5 % of 40)
    expect(rampedRate(40, 200)).toBe(40);
    expect(rampedRate(4, 0)).toBe(1);
    expect(rampedRate(4, 10)).toBe(3); // steps of 1
  });

  it('admits at the ramped R a second in arrival order until the seats are gone, then the rest learn it sold out', () => {
    // 100 buyers over 10 s (10/s), R 4/s (1, 2, 3 then 4 a second, every 5 s), 50 needed: 5 + 10 + 15 by 15 s, then
    // 4 a second: the 50th is admitted in the 20th second.
    const o = Onsale.parse({ ...stadium, registeredBuyers: 100, arrival: [{ seconds: 10, share: 1 }] });
    const t = simulate(o, [4], [50], 1);
    expect(t.lastAdmitted).toEqual([20]);
    expect(t.peakQueuedPerEvent[0]).toBeCloseTo(100 - 5 - 10); // at 10 s: all arrived, 15 admitted
    expect(t.peak.joins).toBeCloseTo(10);
    expect(t.peak.polls).toBeCloseTo(85 / 5);
    expect(t.peak.holds).toBeCloseTo(4);
  });
});

describe('a plan', () => {
  const p = plan(stadium, figures);
  const [event] = p.events;

  it("derives R, the cell's tasks and database from the measured CPU per request", () => {
    // 20,000 seats ÷ 2.4 ÷ 0.8 conversion = 10,417 buyers to admit over 180 − 120 = 60 s.
    expect(event!.releaseRate).toBe(174);
    expect(event!.holdsPerSecond).toBeCloseTo(174 * 1.17, 0);
    const cell = p.cells[0]!;
    expect(cell.tasks.api).toBe(3); // 203.6 holds/s × 2 ms = 0.41 cores: the minimum
    expect(cell.databaseClass).toBe('db.r7g.large'); // 174 × 1.887 ms = 0.33 cores
    expect(p.perCore['holds/s per cell API core']).toBe(500);
  });

  it('sizes the router and the waiting room for the peak of joins and polls', () => {
    expect(p.peak.joinsPerSecond).toBe(Math.round(100_000 / 60));
    const routerCores = (p.peak.requestsPerSecond * 0.5) / 1000;
    expect(p.controlPlane.routerTasks).toBe(Math.max(3, Math.ceil(routerCores / 0.6 - 1e-6)));
    expect(p.waitingRoom.shards).toBeGreaterThanOrEqual(1);
  });

  it('prices the scale-out for the hours of the onsale and the edge requests', () => {
    expect(p.cost.perOnsale.edgeRequests).toBeCloseTo((p.requestsTotal / 10_000) * 0.01, 1);
    expect(p.cost.onsaleHours).toBeCloseTo(1 + p.durationSeconds / 3600, 2);
  });

  it('opens another cell past a cell ceiling of events, and gives a big event a cell of its own', () => {
    const many = Onsale.parse({
      ...stadium,
      events: Array.from({ length: ASSUMPTIONS.maxEventsPerCell + 1 }, (_, i) => ({
        id: `e${i}`,
        seats: 2_000,
        holdTtlSeconds: 600,
      })),
    });
    expect(plan(many, figures).cells.map((c) => c.events.length)).toEqual([ASSUMPTIONS.maxEventsPerCell, 1]);
    // A PostgreSQL twenty times dearer per hold: the stadium needs more than half a cell.
    const heavy = plan(stadium, { ...figures, hold: { cellApi: 2, postgres: 30 } });
    expect(heavy.cells[0]!.dedicated).toBe(true);
  });

  it('emits a manifest fragment the stacks accept', () => {
    const manifest = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../infra/cdktf/cells.json'), 'utf8'));
    const fragment = manifestFragment(p, 'us-east-2');
    const parsed = ManifestSchema.safeParse({
      ...manifest,
      controlPlane: { ...manifest.controlPlane, ...fragment.controlPlane },
      cells: fragment.cells,
    });
    expect(parsed.error?.issues ?? []).toEqual([]);
  });
});

describe('the measured figures', () => {
  const report = {
    date: '2026-12-04T00:00:00Z',
    commit: 'abc',
    quick: false,
    rows: [
      { path: 'Redis per queued buyer', value: 150, measure: 'bytes at 100000 queued' },
      { path: 'hold API at half the max rate', value: 20, measure: 'p99 at 300/s offered' },
    ],
    perRequest: [
      { key: 'hold', cpuMsByProcess: { 'cell API': 2, postgresql: 1.5 } },
      { key: 'forward.router', cpuMsByProcess: { router: 0.5 } },
      { key: 'forward.nginx', cpuMsByProcess: { nginx: 0.1 } },
      { key: 'room.join.http', cpuMsByProcess: { 'control plane API': 0.3, redis: 0.05 } },
      { key: 'room.poll.http', cpuMsByProcess: { 'control plane API': 0.2, redis: 0.04 } },
      { key: 'relay.event', cpuMsByProcess: { relay: 0.1, kafka: 0.2, postgresql: 0.02 } },
    ],
  };

  it("are read from bench:all's per-request section", () => {
    const f = figuresFrom(report, 'r.json');
    expect(f.hold).toEqual({ cellApi: 2, postgres: 1.5 });
    expect(f.holdP99AtHalfRate).toEqual({ ms: 20, perSecond: 300 });
  });

  it('name the benchmark to run when one is missing, and refuse a --quick report', () => {
    const without = { ...report, perRequest: report.perRequest.filter((p) => p.key !== 'relay.event') };
    expect(() => figuresFrom(without, 'r.json')).toThrow(/relay \(load-tests\/relay\/bench\.ts\)/);
    expect(() => figuresFrom({ ...report, quick: true }, 'r.json')).toThrow(MissingFigures);
  });

  it('come from the newest full report; none says to run pnpm bench:all', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capacity-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    expect(() => lastReportFile(dir)).toThrow(/pnpm bench:all/);
    writeFileSync(join(dir, 'bench-2026-12-01T00-00-00Z.json'), JSON.stringify(report));
    writeFileSync(join(dir, 'bench-2026-12-02T00-00-00Z.json'), JSON.stringify({ ...report, quick: true }));
    expect(lastReportFile(dir)).toBe(join(dir, 'bench-2026-12-01T00-00-00Z.json'));
  });
});
