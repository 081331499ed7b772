import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAlive } from '../../scripts/local-platform/process';
import { repoRoot } from '../../test/support/services';

/** The router benchmark, small, with its stderr collected: it names every process it starts with its PID. */
function routerBench(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(repoRoot, 'router/bench/router-vs-nginx.ts')], {
    cwd: repoRoot,
    env: { ...process.env, BENCH_HOLDS: '60', BENCH_WARMUP: '6', BENCH_HALF_HOLDS: '30', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const pids = () =>
    [...stderr.matchAll(/\[bench\] started (.+) pid (\d+)/g)].map((m) => ({ name: m[1]!, pid: Number(m[2]) }));
  return { child, exited, pids, stderr: () => stderr };
}

/** The processes whose parent is `pid` now, with their command lines (from /proc). */
function childrenOf(pid: number): { pid: number; cmdline: string }[] {
  const children: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command's name, in parentheses, may hold spaces: the parent's pid is the second field after it.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid)
        children.push({
          pid: Number(entry),
          cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' '),
        });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return children;
}

async function until(what: string, check: () => boolean, child: ChildProcess, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (child.exitCode !== null) throw new Error(`the benchmark exited before ${what}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a benchmark stops everything it started', () => {
  it('when it fails: its reference (nginx) does not start, after the cell API and the router did', async () => {
    const bench = routerBench({ BENCH_NGINX: '/bin/false' });
    const code = await bench.exited;
    expect(code).toBe(1);
    expect(bench.stderr()).toContain('nginx (/bin/false) did not start: nginx exited with 1');
    const started = bench.pids();
    expect(started.map((p) => p.name)).toEqual(expect.arrayContaining(['router', 'nginx']));
    expect(started.length).toBeGreaterThanOrEqual(3);
    expect(started.filter((p) => isAlive(p.pid))).toEqual([]);
  });

  it('when it is sent SIGTERM mid-run', async () => {
    const bench = routerBench({});
    await until('nginx started', () => bench.pids().some((p) => p.name === 'nginx'), bench.child);
    bench.child.kill('SIGTERM');
    expect(await bench.exited).toBe(143);
    const started = bench.pids();
    expect(started.length).toBeGreaterThanOrEqual(3);
    expect(started.filter((p) => isAlive(p.pid))).toEqual([]);
  });

  it('when SIGTERM comes while a process it spawned is still starting', async () => {
    const bench = routerBench({});
    let spawned: { pid: number; cmdline: string }[] = [];
    await until(
      'the router spawned',
      () => {
        spawned = childrenOf(bench.child.pid!);
        return spawned.some((p) => p.cmdline.includes('router'));
      },
      bench.child,
    );
    // At once: the router is still loading and has not answered its readiness check yet. The benchmark's exit, not
    // its pipes' close: a process left behind would hold its stderr open.
    const exit = new Promise<number | null>((r) => bench.child.once('exit', (code) => r(code)));
    bench.child.kill('SIGTERM');
    expect(await exit).toBe(143);
    expect(bench.stderr()).not.toMatch(/\[bench\] started nginx/);
    await new Promise((r) => setTimeout(r, 500));
    const left = spawned.filter((p) => isAlive(p.pid));
    for (const p of left) process.kill(p.pid, 'SIGKILL');
    expect(left).toEqual([]);
  });
});
