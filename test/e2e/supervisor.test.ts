import { execFile } from 'node:child_process';
import { pbkdf2, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/local-platform/launch';
import { ExitedBeforeReady, lastLinesOfFile, startProcess } from '../../scripts/local-platform/process';
import { supervise } from '../../scripts/local-platform/supervisor';
import { eventually, signalKafka } from '../support/kafka';
import { ownServers } from '../support/own-servers';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { repoRoot } from '../support/services';

/**
 * The local platform keeps its processes alive as ECS would, and their health tells the truth. The broker it
 * freezes is the file's own.
 */

let t: TestPlatform;
const broker = ownServers('supervisor', { kafka: 18392 });
const stateFile = resolve(repoRoot, `.data/e2e/state-${randomUUID().slice(0, 8)}.json`);
const run = promisify(execFile);

beforeAll(async () => {
  await broker.services('start', 'kafka');
  t = await startTestPlatform({
    seatsPerEvent: 20,
    maxReleaseRate: 20,
    // What it supervises is one cell's processes and the control plane's; a second cell would only idle beside them.
    cellCount: 1,
    stateFile,
    servers: { kafkaBrokers: broker.kafkaBrokers },
  });
}, 180_000);
afterAll(async () => {
  signalKafka('SIGCONT', broker.data);
  await t?.stop();
  await broker.remove();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const proc = (name: string) => t.platform.status().find((p) => p.name === name)!;
const readyz = async (url: string) => (await fetch(url).catch(() => null))?.status ?? 0;

describe('the local platform supervises its processes', () => {
  it('a worker killed with kill -9 is started again within seconds, and `platform status` shows the restart', async () => {
    const name = `${t.platform.cells[0]!.id}-saga`;
    const before = proc(name);
    expect(before.state).toBe('running');
    const killedAt = Date.now();
    process.kill(before.pid!, 'SIGKILL');
    const after = await eventually(
      async () => {
        const p = proc(name);
        return p.restarts === 1 && p.state === 'running' && p.pid !== before.pid ? p : null;
      },
      'the supervisor to restart the worker',
      15_000,
    );
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    expect(after.lastExit).toMatchObject({ signal: 'SIGKILL' });
    // The new member joins the group and reports ready.
    await eventually(async () => (await readyz(after.healthUrl!)) === 200, 'the restarted worker to be ready', 60_000);

    const { stdout } = await run('bash', ['scripts/platform', 'status'], {
      cwd: repoRoot,
      env: { ...process.env, ONSALE_PLATFORM_STATE: stateFile },
    });
    // Each owner's stores head its processes: the cell's line names its PostgreSQL, Redis and Kafka, all up.
    const cellId = t.platform.cells[0]!.id;
    expect(stdout).toMatch(new RegExp(`^${cellId}: postgres \\S+ up, redis \\S+ up, kafka \\S+ up$`, 'm'));
    const line = stdout
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.startsWith(`${name} `))!;
    expect(line.split(/\s+/).slice(0, 5)).toEqual([name, String(after.pid), 'running', '1', 'ready']);
    expect(line).toContain('SIGKILL');
  });

  it("a worker's /readyz turns 503 while its broker is frozen and 200 once it is back; the process never exits", async () => {
    const consumers = t.platform.status().filter((p) => /-(saga|payments|tickets)$/.test(p.name));
    expect(consumers).toHaveLength(3);
    for (const c of consumers) expect(await readyz(c.healthUrl!)).toBe(200);
    const restarts = consumers.map((c) => c.restarts);
    signalKafka('SIGSTOP', broker.data);
    try {
      await eventually(
        async () => (await Promise.all(consumers.map((c) => readyz(c.healthUrl!)))).every((s) => s === 503),
        'every consumer to report not ready',
        45_000,
        500,
      );
    } finally {
      signalKafka('SIGCONT', broker.data);
    }
    const states = async () =>
      Promise.all(
        consumers.map(async (c) => `${c.name}: ${await (await fetch(c.healthUrl!).catch(() => null))?.text()}`),
      );
    await eventually(
      async () => (await Promise.all(consumers.map((c) => readyz(c.healthUrl!)))).every((s) => s === 200),
      'every consumer to rejoin its group and report ready',
      90_000,
      500,
    ).catch(async (err) => {
      throw new Error(`${err.message}:\n${(await states()).join('\n')}`);
    });
    expect(consumers.map((c) => proc(c.name).restarts)).toEqual(restarts);
  }, 180_000);

  it('a process that cannot start is reported as crash-looping and not restarted forever', async () => {
    const reports: string[] = [];
    const logFile = resolve(repoRoot, `.data/e2e/crashing-${randomUUID().slice(0, 8)}.log`);
    // No CELL_ID and no DATABASE_URL: the worker refuses to start, naming the variables.
    const p = await supervise(
      'cell/src/saga/main.ts',
      { CELL_ID: '', DATABASE_URL: '', KAFKA_BROKERS: '' },
      {
        name: 'misconfigured-saga',
        logFile,
        report: (line) => reports.push(line),
        policy: { initialDelayMs: 50, maxDelayMs: 200, maxCrashes: 3, windowMs: 60_000 },
      },
    );
    await eventually(async () => p.status().state === 'crash-looping', 'the crash loop to be recognised', 60_000);
    await sleep(1_000);
    expect(p.status().restarts).toBe(2);
    expect(reports).toHaveLength(3);
    expect(reports[0]).toMatch(/misconfigured-saga exited \(code 1\); restart #1/);
    expect(reports.at(-1)).toMatch(/exited \(code 1\) 3 times .* not restarting it/);
    expect(reports.at(-1)).toContain('CELL_ID');
    await p.stop();
  }, 90_000);

  /** A program that writes a line and exits with 1 on its first `failures` starts, then serves 200 on `port`. */
  const failsAtFirst = (failures: number, port: number) => {
    const count = resolve(repoRoot, `.data/e2e/starts-${randomUUID().slice(0, 8)}`);
    const serve = `require('node:http').createServer((_, res) => res.end('ok')).listen(${port}, '127.0.0.1')`;
    const script = `n=$(( $(cat ${count} 2>/dev/null || echo 0) + 1 )); echo $n > ${count}
      if [ $n -le ${failures} ]; then echo "start $n: listen EADDRINUSE 127.0.0.1:${port}" >&2; exit 1; fi
      exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(serve)}`;
    return ['bash', '-c', script];
  };
  const quickPolicy = { initialDelayMs: 50, maxDelayMs: 200, maxCrashes: 3, windowMs: 60_000 };

  it("a process's log holds everything it wrote once it has settled, which its exit alone does not promise", async () => {
    const logFile = resolve(repoRoot, `.data/e2e/last-words-${randomUUID().slice(0, 8)}.log`);
    const lastWords = `process.stderr.write('the reason it ended\\n', () => process.exit(3))`;
    const p = startProcess('unused', {}, { name: 'last-words', command: [process.execPath, '-e', lastWords], logFile });
    // This process's thread pool busy while the other writes and exits, as a loaded machine keeps it: the exit is
    // known at once, while the line waits for a thread to be written to the log.
    const busy = Array.from({ length: 4 }, () => promisify(pbkdf2)('x', 'y', 5_000_000, 32, 'sha256'));
    const started = await p;
    expect(await started.exited).toBe(3);
    await started.settled;
    expect(readFileSync(logFile, 'utf8')).toBe('the reason it ended\n');
    expect(lastLinesOfFile(logFile, 1)).toBe('    the reason it ended');
    await Promise.all(busy);
  });

  it('a process that exits before it is ready is started again, and the report says why it exited', async () => {
    const reports: string[] = [];
    const port = await freePort();
    const p = await supervise(
      'unused',
      {},
      {
        name: 'flaky-start',
        command: failsAtFirst(1, port),
        readyUrl: `http://127.0.0.1:${port}/`,
        logFile: resolve(repoRoot, `.data/e2e/flaky-start-${randomUUID().slice(0, 8)}.log`),
        report: (line) => reports.push(line),
        policy: quickPolicy,
      },
    );
    try {
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
      expect(p.status()).toMatchObject({ state: 'running', restarts: 1 });
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatch(/flaky-start exited \(code 1\) before it was ready; start #2 in 50 ms/);
      expect(reports[0]).toContain(`start 1: listen EADDRINUSE 127.0.0.1:${port}`);
    } finally {
      await p.stop();
    }
  });

  it('a process that keeps exiting before it is ready fails its start with its last lines, and is not left running', async () => {
    const reports: string[] = [];
    const port = await freePort();
    const start = supervise(
      'unused',
      {},
      {
        name: 'never-ready',
        command: failsAtFirst(100, port),
        readyUrl: `http://127.0.0.1:${port}/`,
        logFile: resolve(repoRoot, `.data/e2e/never-ready-${randomUUID().slice(0, 8)}.log`),
        report: (line) => reports.push(line),
        policy: quickPolicy,
      },
    );
    const err = await start.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ExitedBeforeReady);
    expect((err as Error).message).toMatch(/^never-ready exited with 1 before it was ready/);
    expect((err as Error).message).toContain(`start 3: listen EADDRINUSE 127.0.0.1:${port}`);
    // Two restarts reported, the third exit is the crash loop that fails the start.
    expect(reports.map((r) => /start #(\d)/.exec(r)?.[1])).toEqual(['2', '3']);
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });
});
