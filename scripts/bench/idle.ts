/**
 * `pnpm bench:idle [--seconds 30] [--runs 2] [--cells 2]`: what a whole platform costs while nobody buys, in cores by
 * process (its processes by name, the servers by program): the cost every started platform, every worker
 * between onsales and every test file that starts one pays. A platform as the end-to-end tests start it
 * (two cells on the shared servers unless `--cells` says otherwise), measured after it has settled from its start and seed.
 */
import { parseArgs } from 'node:util';
import { cpuMeter } from '../../load-tests/lib/cpu';
import { runBench } from '../../load-tests/lib/harness';
import { startTestPlatform, type TestPlatform } from '../../test/support/platform';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    runs: { type: 'string', default: '2' },
    cells: { type: 'string', default: '2' },
  },
});
const SECONDS = Number(values.seconds);
const RUNS = Number(values.runs);
const CELLS = Number(values.cells);
const SETTLE_MS = 10_000;

await runBench('idle', async (bench) => {
  const runs = [];
  for (let run = 0; run < RUNS; run++) {
    let platform: TestPlatform | undefined;
    // A cell's processes by role (cell ids are random): both cells' together.
    const pids = () =>
      new Map(
        (platform?.platform.status() ?? []).flatMap((p) =>
          p.pid ? [[p.pid, p.name.replace(/^e2e[a-z][0-9a-f]+-/, 'cell ')] as const] : [],
        ),
      );
    const starting = cpuMeter(pids);
    platform = await startTestPlatform({ seatsPerEvent: 20, maxReleaseRate: 50, cellCount: CELLS });
    // Stopped at the end of its run, or by the harness if the benchmark is interrupted before: once either way.
    const started = platform;
    let stopping: Promise<void> | undefined;
    const stop = () => (stopping ??= started.stop());
    bench.defer(stop);
    const start = starting.read();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const idling = cpuMeter(pids);
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    runs.push({ start, idle: idling.read() });
    await stop();
  }
  return { seconds: SECONDS, cells: CELLS, runs };
});
