import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/local-platform/launch';
import { isAlive, type RunningProcess, startProcess } from '../../scripts/local-platform/process';

const started: RunningProcess[] = [];
afterEach(async () => {
  for (const p of started.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

/** The fixture as its own process tree; resolves once `count` distinct pids have answered on its port. */
async function startGroup(count: number) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const group = await startProcess(
    'contracts/test/fixtures/pid-server.ts',
    { PORT: String(port), PROCESSES: String(count) },
    { name: 'pid-server', readyUrl: url },
  );
  started.push(group);
  const pids = new Set<number>();
  const deadline = Date.now() + 30_000;
  while (pids.size < count && Date.now() < deadline) {
    // A fresh connection each time, so the primary's round robin reaches every process.
    const r = await fetch(url, { headers: { connection: 'close' } });
    pids.add(Number(await r.text()));
  }
  return { group, pids: [...pids] };
}

async function gone(pids: number[]) {
  const deadline = Date.now() + 10_000;
  while (pids.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !pids.some(isAlive);
}

describe('serveInProcesses', () => {
  it('serves one port from several processes, and SIGTERM ends all of them cleanly', async () => {
    const { group, pids } = await startGroup(2);
    expect(pids).toHaveLength(2);
    expect(pids).not.toContain(group.child.pid);
    group.child.kill('SIGTERM');
    expect(await group.exited).toBe(0);
    expect(await gone(pids)).toBe(true);
  });

  it('one process dying takes the group down with exit 1, for the supervisor to restart it whole', async () => {
    const { group, pids } = await startGroup(2);
    process.kill(pids[0]!, 'SIGKILL');
    expect(await group.exited).toBe(1);
    expect(await gone(pids)).toBe(true);
  });

  it('with a count of 1 the server runs in the process itself', async () => {
    const { group, pids } = await startGroup(1);
    expect(pids).toEqual([group.child.pid]);
  });
});
