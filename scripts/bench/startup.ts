/**
 * `pnpm bench:startup [--runs 3]`: how long a process takes from spawn to answering its readiness check,
 * run from its bundle (as the image runs it) and from its sources under tsx, in alternating order so a
 * shared machine's drift falls on both alike: the cell API (on a migrated database) and the router.
 */
import { parseArgs } from 'node:util';
import { runBench } from '../../load-tests/lib/harness';
import { percentile, round } from '../../load-tests/lib/stats';
import { startFakeControlPlane } from '../../router/test/fakes';
import { startCellApiProcess } from '../../test/support/cell-process';
import { createTestDatabase } from '../../test/support/db';
import { startIdentity } from '../../test/support/identity';
import { bundleCommand } from '../bundle';
import { freePort } from '../local-platform/launch';
import { startProcess } from '../local-platform/process';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const RUNS = Number(values.runs);
const RUNTIMES = ['bundle', 'tsx'] as const;

await runBench('startup', async (bench) => {
  const identity = await startIdentity();
  bench.defer(identity.close);
  const controlPlane = await startFakeControlPlane();
  bench.defer(controlPlane.close);
  const db = await createTestDatabase('bench_startup');
  bench.defer(db.drop);
  const ms: Record<string, number[]> = {};
  const time = async (key: string, start: () => Promise<{ stop(): Promise<void> }>) => {
    const t0 = performance.now();
    const p = await start();
    ms[key] = [...(ms[key] ?? []), performance.now() - t0];
    await p.stop();
  };
  for (let run = 0; run < RUNS; run++) {
    for (const runtime of run % 2 === 0 ? RUNTIMES : [...RUNTIMES].reverse()) {
      await time(`cell-api ${runtime}`, async () => {
        const cell = await startCellApiProcess(identity, {
          cellId: 'startup',
          port: await freePort(),
          poolSize: 4,
          database: db,
          runtime,
          spawned: bench.started,
        });
        return cell.api;
      });
      await time(`router ${runtime}`, async () => {
        const port = await freePort();
        return startProcess(
          'router/src/main.ts',
          {
            PORT: String(port),
            CONTROL_PLANE_URL: controlPlane.url,
            ADMISSION_JWKS_URL: identity.admissionJwksUrl,
            LOG_LEVEL: 'warn',
          },
          {
            name: `router (${runtime})`,
            readyUrl: `http://127.0.0.1:${port}/readyz`,
            command: runtime === 'bundle' ? bundleCommand('router/src/main.ts') : undefined,
            spawned: bench.started,
          },
        );
      });
    }
  }
  return {
    runs: RUNS,
    readyMs: Object.fromEntries(
      Object.entries(ms).map(([k, v]) => [
        k,
        { median: round(percentile([...v], 50), 0), each: v.map((x) => round(x, 0)) },
      ]),
    ),
  };
});
