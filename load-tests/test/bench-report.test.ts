import { describe, expect, it } from 'vitest';
import { medianRows, rows } from '../../scripts/bench/all';

/** A relay benchmark's result, as load-tests/relay/bench.ts returns it, with only what the report reads. */
const relay = (relayRate: number, perfRate: number, ageP99: number) => ({
  relay: { eventsPerSecond: relayRate },
  producerPerformance: { recordsPerSecond: perfRate },
  fixedOutboxRate: { eventsPerSecond: 1_000, outboxAgeP99Ms: ageP99, unpublished: 0 },
});

/** A waiting-room benchmark's result, with only what the report reads; CPU readings left out. */
const waitingRoom = (http: { bare: number; polls: number; mixed: number; floorPolls: number; floorMixed: number }) => ({
  joins: { perSec: 26_000 },
  polls: { perSec: 47_000 },
  memory: { queued: 100_000, bytesPerQueuedBuyer: 186 },
  redisBenchmark: { 'EVALSHA join (idempotent) -P 1': { rps: 50_000 }, 'EVALSHA status -P 1': { rps: 86_000 } },
  httpOverSockets: {
    pollBodyBytes: 331,
    bareNodeServer: { perSec: http.bare },
    polls: { perSec: http.polls },
    mixed: { perSec: http.mixed },
    floor: { polls: { perSec: http.floorPolls }, mixed: { perSec: http.floorMixed } },
  },
});

/** A router benchmark's result, as router/bench/router-vs-nginx.ts returns it, with only what the report reads. */
const router = (added: { router: number; nginx: number; floor: number }) => {
  const figures = { routerAddedP50Ms: added.router, nginxAddedP50Ms: added.nginx, floorAddedP50Ms: added.floor };
  const cpu = { seconds: 1, machineCores: 2, machineBusyCores: 1.8, stolenCores: 0, coresByProcess: {} };
  return {
    results: { router: { reqPerSecond: 600, cpu }, nginx: { reqPerSecond: 700, cpu }, floor: { cpu } },
    ratios: { ...figures, halfLoad: { ...figures, routerOwnP50Ms: 0.27 } },
  };
};

describe('pnpm bench:all report', () => {
  it('puts each ratio beside the reference measured in the same run, with the target and whether it is met', () => {
    const [throughput, age] = rows('relay', relay(600, 1_000, 150));
    expect(throughput).toMatchObject({
      value: 600,
      reference: { name: "Kafka's ProducerPerformance", value: 1_000 },
      ratio: 0.6,
      target: '≥ 0.5 of reference',
      met: true,
    });
    expect(age).toMatchObject({ value: 150, target: '< 200 ms', met: true });
    expect(rows('relay', relay(400, 1_000, 250)).map((r) => r.met)).toEqual([false, false]);
  });

  it('with three runs reports the run whose ratio is the median, its reference from that same run', () => {
    const perRun = [relay(500, 1_000, 100), relay(900, 1_000, 300), relay(300, 1_200, 200)].map((r) =>
      rows('relay', r),
    );
    const [throughput, age] = medianRows(perRun);
    // Ratios 0.5, 0.9, 0.25: the median is run 1's, reported with run 1's own reference.
    expect(throughput).toMatchObject({ value: 500, reference: { value: 1_000 }, ratio: 0.5, medianOfRun: 1 });
    expect(throughput!.runs).toEqual([0.5, 0.9, 0.25]);
    expect(age).toMatchObject({ value: 200, medianOfRun: 3 });
  });

  it("shows the waiting room's floor beside the same run's references, as information that cannot fail a run", () => {
    const byPath = new Map(
      rows(
        'waiting-room',
        waitingRoom({ bare: 40_000, polls: 10_000, mixed: 6_000, floorPolls: 13_000, floorMixed: 6_600 }),
      ).map((r) => [r.path, r]),
    );
    expect(byPath.get('waiting room polls over HTTP')).toMatchObject({ ratio: 0.25, met: false });
    expect(byPath.get('waiting room joins + polls over HTTP')).toMatchObject({ value: 6_000, met: false });
    expect(byPath.get("waiting room polls over HTTP, without the API's HTTP stack")).toMatchObject({
      value: 13_000,
      reference: { name: 'bare Node HTTP server', value: 40_000 },
      ratio: 0.325,
      target: '(information)',
      met: true,
    });
    expect(byPath.get("waiting room joins + polls over HTTP, without the API's HTTP stack")).toMatchObject({
      value: 6_600,
      reference: { name: 'the API, same mix', value: 6_000 },
      ratio: 1.1,
      met: true,
    });
  });

  it("shows the least a Node proxy adds beside the router's figure from the same run, as information", () => {
    const byPath = new Map(rows('router', router({ router: 0.7, nginx: 0.1, floor: 0.28 })).map((r) => [r.path, r]));
    expect(byPath.get('router added p50 latency, half load')).toMatchObject({ value: 0.7, met: false });
    for (const phase of ['saturation', 'half load'])
      expect(byPath.get(`a minimal Node proxy's added p50 latency, ${phase}`)).toMatchObject({
        value: 0.28,
        reference: { name: 'router added p50 vs direct', value: 0.7 },
        ratio: 0.4,
        target: '(information)',
        met: true,
      });
    // Within the 0.5 ms floor the router meets its target, whatever nginx's (noisy, here negative) figure.
    expect(rows('router', router({ router: 0.45, nginx: -0.5, floor: 0.2 }))[1]).toMatchObject({ met: true });
  });

  it('ranks a row by its value when some run has no ratio for it, never a ratio against a value', () => {
    // nginx's figure positive in run 1 only: run 1's row has a ratio (7), the others none.
    const perRun = [
      router({ router: 0.7, nginx: 0.1, floor: 0.3 }),
      router({ router: 1.2, nginx: -0.2, floor: 0.4 }),
      router({ router: 0.9, nginx: 0, floor: 0.5 }),
    ].map((r) => rows('router', r));
    const halfLoad = medianRows(perRun).find((r) => r.path === 'router added p50 latency, half load')!;
    expect(halfLoad).toMatchObject({ value: 0.9, medianOfRun: 3, runs: [0.7, 1.2, 0.9] });
  });
});
