import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cpuMeter } from '../lib/cpu';

/** A Node child that spins for `ms` of wall time, then, unless `exitAfter`, waits for its stdin to close. */
function spinner(ms: number, exitAfter: boolean) {
  const code = `const t = Date.now(); while (Date.now() - t < ${ms}); ${exitAfter ? '' : "process.stdin.on('end', () => process.exit(0)); process.stdin.resume();"} console.log('spun');`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  const spun = new Promise<void>((r) => child.stdout.once('data', () => r()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return { child, spun, exited };
}

describe('the CPU meter', () => {
  it('counts a tool that ran to its end inside the phase, and not what an ending child used before it', async () => {
    // Spins before the phase begins, then ends during it: none of its CPU belongs to the phase.
    const before = spinner(800, false);
    await before.spun;
    const meter = cpuMeter(() => new Map());
    before.child.stdin.end();
    await before.exited;
    // Starts, spins for 500 ms and ends, all inside the phase.
    const inside = spinner(500, true);
    await inside.exited;
    const reading = meter.read();
    const toolSeconds =
      (reading.coresByProcess['tools run to their end (pgbench, Kafka tools)'] ?? 0) * reading.seconds;
    // The 500 ms spin (less when another process has the core), plus Node's start; never the earlier 800 ms.
    expect(toolSeconds).toBeGreaterThan(0.2);
    expect(toolSeconds).toBeLessThan(0.8);
    expect(reading.machineBusyCores).toBeLessThanOrEqual(reading.machineCores);
  });

  it('names a process it was told about, and counts a child of it that ended meanwhile as it', async () => {
    // The parent starts a child that spins for 600 ms, says so once the child ended, and lives on until told.
    const parent = spawn(
      process.execPath,
      [
        '-e',
        "require('child_process').spawn(process.execPath, ['-e', 'const t = Date.now(); while (Date.now() - t < 600);']).on('exit', () => console.log('reaped')); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));",
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const meter = cpuMeter(() => new Map([[parent.pid!, 'the parent']]));
    await new Promise<void>((r) => parent.stdout.once('data', () => r()));
    const reading = meter.read();
    parent.stdin.end();
    const parentSeconds = (reading.coresByProcess['the parent'] ?? 0) * reading.seconds;
    expect(parentSeconds).toBeGreaterThan(0.2);
    expect(reading.coresByProcess['tools run to their end (pgbench, Kafka tools)'] ?? 0).toBeLessThan(0.1);
  });
});
