import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { repoRoot } from './services';

/** Starts a cell process role (`api`, `relay`, ...) as its own OS process, as production runs it. */
export async function startCellProcess(
  entry: string,
  env: Record<string, string>,
  readyUrl?: string,
): Promise<{ child: ChildProcess; exited: Promise<number | null>; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(repoRoot, entry)], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  if (readyUrl) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}`);
      try {
        if ((await fetch(readyUrl)).ok) break;
      } catch {}
      if (Date.now() > deadline) throw new Error(`${entry} did not become ready`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    child,
    exited,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}
