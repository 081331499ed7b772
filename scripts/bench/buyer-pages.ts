/**
 * The buyer pages' first load on this machine: runs the browser journey (test/e2e/buyer-pages.test.ts, a whole
 * platform through the edge router, so every page has real data behind it: a waiting room, a seat map, a ticketed
 * order), which measures each page in a fresh browser context (empty cache) with the buyer's sign-in, and prints
 * the table it wrote (.data/artifacts/buyer/first-load.md): bytes transferred and requests until interactive,
 * DOMContentLoaded, and interactive (the page script's mark once its first real content is drawn), median of 3.
 *
 * Usage: pnpm bench:buyer-pages   (needs `bash scripts/services up`; takes about a minute)
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { repoRoot } from '../local-platform/launch';

const run = spawnSync('pnpm', ['vitest', 'run', 'test/e2e/buyer-pages.test.ts'], {
  cwd: repoRoot,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, ONSALE_FIRST_LOAD_RUNS: '3' },
});
if (run.status !== 0) {
  console.error(`the buyer pages' journey failed (exit ${run.status}); run it alone to see why`);
  process.exit(1);
}
console.log(readFileSync(resolve(repoRoot, '.data/artifacts/buyer/first-load.md'), 'utf8'));
