/**
 * `bash scripts/platform status`: each process of the running local platform, its pid, state,
 * restarts and what its health endpoint says now. Exits 3 when no platform is running.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { repoRoot } from './process';
import type { SupervisedStatus } from './supervisor';

export const defaultStateFile = resolve(repoRoot, '.data/platform/state.json');

export function readState(file: string): { launcherPid: number; processes: SupervisedStatus[] } | null {
  if (!existsSync(file)) return null;
  const state = JSON.parse(readFileSync(file, 'utf8')) as { launcherPid: number; processes: SupervisedStatus[] };
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.env.ONSALE_PLATFORM_STATE ?? defaultStateFile;
  const state = readState(file);
  if (!state) {
    console.log('the platform is not running');
    process.exit(3);
  }
  const health = await Promise.all(state.processes.map((p) => probe(p.healthUrl)));
  const rows = state.processes.map((p, i) => [
    p.name,
    String(p.pid ?? '-'),
    p.state,
    String(p.restarts),
    health[i]!,
    p.lastExit ? `${p.lastExit.signal ?? `code ${p.lastExit.code}`} at ${p.lastExit.at}` : '',
  ]);
  const header = ['PROCESS', 'PID', 'STATE', 'RESTARTS', 'HEALTH', 'LAST EXIT'];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  for (const r of [header, ...rows])
    console.log(
      r
        .map((v, c) => v.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    );
  console.log(`\nlauncher pid ${state.launcherPid}`);
}
