import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/services';

/**
 * A process of its own that hands out `count` ports, as a test file's process does for the platforms it starts, and
 * lives on (its claims with it) until `release` ends it.
 */
async function portHolder(worker: string, count: number) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { freePort } from './scripts/local-platform/launch.ts';
       const ports = [];
       for (let i = 0; i < ${count}; i++) ports.push(await freePort());
       console.log(JSON.stringify(ports));
       process.stdin.on('end', () => process.exit(0)).resume();`,
    ],
    { cwd: repoRoot, env: { ...process.env, VITEST_POOL_ID: worker }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  while (!out.includes('\n')) {
    if (child.exitCode !== null) throw new Error(`the port holder exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    ports: JSON.parse(out) as number[],
    async release() {
      child.stdin.end();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

describe('the ports platforms started side by side listen on', () => {
  // A port is only known as taken by the process that picked it until its child binds it: two platforms once handed
  // out the same one (one's requests reached the other's health server; a worker crash-looped on EADDRINUSE).
  it('two live processes never hand out the same port, even with one VITEST_POOL_ID, and none below 20000', async () => {
    // One pool id for both, as vitest 4 gives two files of an isolated group running at once.
    const holders = await Promise.all([portHolder('1', 400), portHolder('1', 400)]);
    try {
      const [first, second] = holders.map((h) => h.ports) as [number[], number[]];
      expect(new Set(first).size).toBe(400);
      expect(new Set(second).size).toBe(400);
      expect(first.filter((port) => second.includes(port))).toEqual([]);
      expect([...first, ...second].filter((port) => port < 20_000)).toEqual([]);
    } finally {
      await Promise.all(holders.map((h) => h.release()));
    }
  });
});
