import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const started: ChildProcess[] = [];
afterEach(() => {
  for (const p of started.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** The fixture as its own process tree; resolves once `count` distinct pids have answered on its port. */
async function startGroup(count: number) {
  const port = await freePort();
  const primary = spawn(process.execPath, ['--import', 'tsx', resolve(__dirname, 'fixtures/pid-server.ts')], {
    env: { ...process.env, PORT: String(port), PROCESSES: String(count) },
    stdio: 'ignore',
  });
  started.push(primary);
  const pids = new Set<number>();
  const deadline = Date.now() + 30_000;
  while (pids.size < count && Date.now() < deadline) {
    // A fresh connection each time, so the primary's round robin reaches every process.
    const pid = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } })
      .then(async (r) => Number(await r.text()))
      .catch(() => undefined);
    if (pid) pids.add(pid);
    else await new Promise((r) => setTimeout(r, 100));
  }
  return { primary, port, pids: [...pids] };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function gone(pids: number[]) {
  const deadline = Date.now() + 10_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !pids.some(alive);
}

describe('serveInProcesses', () => {
  it('serves one port from several processes, and SIGTERM ends all of them cleanly', async () => {
    const { primary, pids } = await startGroup(2);
    expect(pids).toHaveLength(2);
    expect(pids).not.toContain(primary.pid);
    const exited = once(primary, 'exit');
    primary.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
    expect(await gone(pids)).toBe(true);
  });

  it('one process dying takes the group down with exit 1, for the supervisor to restart it whole', async () => {
    const { primary, pids } = await startGroup(2);
    const exited = once(primary, 'exit');
    process.kill(pids[0]!, 'SIGKILL');
    expect((await exited)[0]).toBe(1);
    expect(await gone(pids)).toBe(true);
  });

  it('with a count of 1 the server runs in the process itself', async () => {
    const { primary, pids } = await startGroup(1);
    expect(pids).toEqual([primary.pid]);
  });
});
