import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/services';

const run = promisify(execFile);

/** The ports one test worker (VITEST_POOL_ID) hands out to the platform it starts, picked in a process of its own. */
async function portsOfWorker(worker: string, count: number): Promise<number[]> {
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { freePort } from './scripts/local-platform/launch.ts';
       const ports = [];
       for (let i = 0; i < ${count}; i++) ports.push(await freePort());
       console.log(JSON.stringify(ports));`,
    ],
    { cwd: repoRoot, env: { ...process.env, VITEST_POOL_ID: worker } },
  );
  return JSON.parse(stdout);
}

describe('the ports platforms started side by side listen on', () => {
  // A port is only known as taken by the process that picked it until its child binds it: two workers once handed
  // out the same one, and one platform's control-plane requests reached the other's health server (405).
  it('two test workers never hand out the same port, and none from the fixed ranges below 20000', async () => {
    // Workers 6 and 7: this suite runs at most three side by side (pool ids 1 to 3), whose platforms must not find a
    // port they were handed bound for a moment here (a platform beside this test once failed to start so).
    const [first, second] = await Promise.all([portsOfWorker('6', 400), portsOfWorker('7', 400)]);
    expect(new Set(first).size).toBe(400);
    expect(new Set(second).size).toBe(400);
    expect(first.filter((port) => second.includes(port))).toEqual([]);
    expect([...first, ...second].filter((port) => port < 20_000)).toEqual([]);
  });
});
