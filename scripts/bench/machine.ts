/**
 * `pnpm bench:machine`: how fast this machine is right now. A fixed CPU task (PBKDF2-SHA256, 10 million iterations) runs
 * in one process per core at once, three rounds; it prints the median wall time. CI prints it before and after the
 * tests, because the suite's time is comparable between runs only beside it: the same schedule's test phase took
 * 858 s in one fresh-clone run and 1,086 s in another, hours apart on this kind of machine.
 */
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { percentile } from '../../load-tests/lib/stats';

const run = promisify(execFile);
const TASK = "require('node:crypto').pbkdf2Sync('onsale', 'reference', 10_000_000, 32, 'sha256')";
const ROUNDS = 3;
const processes = availableParallelism();

const rounds: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const started = performance.now();
  await Promise.all(Array.from({ length: processes }, () => run(process.execPath, ['-e', TASK])));
  rounds.push((performance.now() - started) / 1000);
}
const median = percentile([...rounds], 50);
console.log(
  `machine: ${processes} processes x PBKDF2-SHA256 (10M iterations) at once: median ${median.toFixed(2)} s ` +
    `(rounds ${rounds.map((s) => s.toFixed(2)).join(', ')})`,
);
