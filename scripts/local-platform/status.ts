/**
 * `bash scripts/platform status`: the control plane and each cell, each with its own stores (PostgreSQL, Redis,
 * Kafka: whether they answer now) and its processes (pid, state, restarts, what the health endpoint says now).
 * Exits 3 when no platform is running.
 */
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { repoRoot } from './process';
import type { SupervisedStatus } from './supervisor';

export const defaultStateFile = resolve(repoRoot, '.data/platform/state.json');

export interface PlatformState {
  launcherPid: number;
  updatedAt: string;
  processes: SupervisedStatus[];
  /** Each owner's stores, as host:port (Kafka: its broker list). */
  services: { owner: string; postgres: string; redis: string; kafka: string }[];
}

export function readState(file: string): PlatformState | null {
  if (!existsSync(file)) return null;
  const state = JSON.parse(readFileSync(file, 'utf8')) as PlatformState;
  try {
    process.kill(state.launcherPid, 0);
    return state;
  } catch {
    return null;
  }
}

async function probe(url: string | undefined): Promise<string> {
  if (!url) return '-';
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1_500) });
    return res.ok ? 'ready' : `not ready (${res.status})`;
  } catch {
    return 'no answer';
  }
}

/** Whether something accepts a TCP connection at host:port now. */
function listening(address: string): Promise<boolean> {
  const [host, port] = address.split(',')[0]!.split(':');
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port), timeout: 1_000 });
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/** The processes of one owner: a cell's are named after it; the rest are the control plane's and the edge's. */
const ownedBy = (owner: string, cells: string[]) => (p: SupervisedStatus) =>
  owner === 'control plane' ? !cells.some((c) => p.name.startsWith(`${c}-`)) : p.name.startsWith(`${owner}-`);

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.env.ONSALE_PLATFORM_STATE ?? defaultStateFile;
  const state = readState(file);
  if (!state) {
    console.log('the platform is not running');
    process.exit(3);
  }
  const health = new Map(
    await Promise.all(state.processes.map(async (p) => [p.name, await probe(p.healthUrl)] as const)),
  );
  const header = ['PROCESS', 'PID', 'STATE', 'RESTARTS', 'HEALTH', 'LAST EXIT'];
  const rows = state.processes.map((p) => [
    p.name,
    String(p.pid ?? '-'),
    p.state,
    String(p.restarts),
    health.get(p.name)!,
    p.lastExit ? `${p.lastExit.signal ?? `code ${p.lastExit.code}`} at ${p.lastExit.at}` : '',
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) =>
    r
      .map((v, c) => v.padEnd(widths[c]!))
      .join('  ')
      .trimEnd();
  const cells = state.services.map((s) => s.owner).filter((o) => o !== 'control plane');
  for (const s of state.services) {
    const stores = await Promise.all(
      (['postgres', 'redis', 'kafka'] as const).map(
        async (kind) => `${kind} ${s[kind]} ${(await listening(s[kind])) ? 'up' : 'DOWN'}`,
      ),
    );
    console.log(`${s.owner}: ${stores.join(', ')}`);
    console.log(`  ${line(header)}`);
    for (const [i, p] of state.processes.entries()) if (ownedBy(s.owner, cells)(p)) console.log(`  ${line(rows[i]!)}`);
    console.log('');
  }
  console.log(`launcher pid ${state.launcherPid}`);
}
