/**
 * Where a phase's CPU went, from /proc: the cores each process used between `cpuMeter()` and `read()`,
 * grouped by role (a process the benchmark started by its name, the load generator itself, the services by
 * their program), beside the whole machine's busy cores and the cores the hypervisor took away (steal).
 * This is what says whether a ratio is held back by the code under test or by a machine whose cores are
 * all taken.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { round } from './stats';

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux kernel Node supports

interface ProcSample {
  ppid: number;
  comm: string;
  ticks: number;
  /** CPU of its children that ended and were reaped: a reference tool run to its end. */
  reapedTicks: number;
}

function processes(): Map<number, ProcSample> {
  const out = new Map<number, ProcSample>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // comm is in parentheses and may itself hold spaces or parentheses: the fields start after the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      out.set(Number(entry), {
        ppid: Number(fields[1]),
        comm,
        ticks: Number(fields[11]) + Number(fields[12]),
        reapedTicks: Number(fields[13]) + Number(fields[14]),
      });
    } catch {
      // the process ended while we read the list
    }
  }
  return out;
}

function machineTicks() {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is already counted in user)
  const n = values.slice(0, 8).map(Number);
  return { total: n.reduce((a, b) => a + b, 0), idle: n[3]! + n[4]!, steal: n[7]! };
}

const SERVICE_PROGRAMS: Record<string, string> = {
  postgres: 'postgresql',
  'redis-server': 'redis',
  java: 'kafka (java)',
  nginx: 'nginx',
};

/** Starts a meter; `named` gives the role of each process the caller started (its descendants count as it). */
export function cpuMeter(named: () => ReadonlyMap<number, string>) {
  const startedAt = performance.now();
  const before = processes();
  const machineBefore = machineTicks();
  return {
    read() {
      const seconds = (performance.now() - startedAt) / 1000;
      const after = processes();
      const machineAfter = machineTicks();
      const names = named();
      const role = (pid: number): string => {
        for (let p = pid, hops = 0; p > 1 && hops < 16; hops++) {
          if (p === process.pid) return 'load generator (this process)';
          const name = names.get(p);
          if (name) return name;
          p = after.get(p)?.ppid ?? before.get(p)?.ppid ?? 0;
        }
        return SERVICE_PROGRAMS[after.get(pid)?.comm ?? ''] ?? 'other';
      };
      const cores: Record<string, number> = {};
      const add = (who: string, ticks: number) => {
        if (ticks > 0) cores[who] = (cores[who] ?? 0) + ticks / TICKS_PER_SECOND / seconds;
      };
      // A child that ended meanwhile brings its whole life's CPU to its parent's reaped total: what it had
      // used before the phase began is taken off again.
      const usedBefore = new Map<number, number>();
      for (const [pid, s] of before)
        if (!after.has(pid)) usedBefore.set(s.ppid, (usedBefore.get(s.ppid) ?? 0) + s.ticks + s.reapedTicks);
      for (const [pid, s] of after) {
        const was = before.get(pid);
        add(role(pid), s.ticks - (was?.ticks ?? 0));
        // Children that ended meanwhile count as their parent (PostgreSQL's backends of a pgbench run), except
        // this process's own: those are the reference tools it ran.
        const reaped = s.reapedTicks - (was?.reapedTicks ?? 0) - (usedBefore.get(pid) ?? 0);
        add(pid === process.pid ? 'tools run to their end (pgbench, Kafka tools)' : role(pid), reaped);
      }
      const total = machineAfter.total - machineBefore.total;
      const share = (ticks: number) => (total > 0 ? ticks / total : 0);
      const stealShare = share(machineAfter.steal - machineBefore.steal);
      const busyShare = 1 - share(machineAfter.idle - machineBefore.idle) - stealShare;
      return {
        seconds: round(seconds, 2),
        machineCores: cpus().length,
        machineBusyCores: round(busyShare * cpus().length, 2),
        // Cores the hypervisor gave to other guests while ours wanted them: a run with steal is not comparable.
        stolenCores: round(stealShare * cpus().length, 2),
        coresByProcess: Object.fromEntries(
          Object.entries(cores)
            .filter(([, c]) => c >= 0.01)
            .sort(([, a], [, b]) => b - a)
            .map(([k, c]) => [k, round(c, 2)]),
        ),
      };
    },
  };
}

export type CpuReading = ReturnType<ReturnType<typeof cpuMeter>['read']>;

/** Several readings of one path (its rounds), weighted by their length, as one. */
export function mergeReadings(readings: CpuReading[]): CpuReading | undefined {
  const seconds = readings.reduce((a, r) => a + r.seconds, 0);
  if (readings.length === 0 || seconds === 0) return undefined;
  const weighted = (pick: (r: CpuReading) => number) =>
    round(readings.reduce((a, r) => a + pick(r) * r.seconds, 0) / seconds, 2);
  const who = new Set(readings.flatMap((r) => Object.keys(r.coresByProcess)));
  return {
    seconds: round(seconds, 2),
    machineCores: readings[0]!.machineCores,
    machineBusyCores: weighted((r) => r.machineBusyCores),
    stolenCores: weighted((r) => r.stolenCores),
    coresByProcess: Object.fromEntries(
      [...who]
        .map((w) => [w, weighted((r) => r.coresByProcess[w] ?? 0)] as const)
        .filter(([, c]) => c >= 0.01)
        .sort(([, a], [, b]) => b - a),
    ),
  };
}
