/**
 * `pnpm profile:summary <file.cpuprofile> [--top 20]`: where a process's CPU went, from the V8 CPU
 * profile a bundled process writes under ONSALE_CPU_PROF_DIR. Self time is grouped by what owns the
 * code: a package (pg, drizzle-orm, hono, jose, ...), one of the platform's own folders
 * (cell/src/holds, contracts/src/runtime, ...), Node's internals, the garbage collector, or idle.
 * The bundles keep esbuild's `// <source path>` line before every module, so a sample's line in
 * the bundle names its module without a source map.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The module each line of a bundle belongs to, from esbuild's `// path` headers. */
function moduleIndex(bundlePath: string): (line: number) => string {
  const starts: { line: number; path: string }[] = [];
  readFileSync(bundlePath, 'utf8')
    .split('\n')
    .forEach((text, line) => {
      const m = /^\/\/ ((?:node_modules|[\w-]+)\/\S+\.[cm]?[jt]s)$/.exec(text);
      if (m) starts.push({ line, path: m[1]! });
    });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = '(bundle prelude)';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]!.line <= line) {
        found = starts[mid]!.path;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** A package name for code under node_modules; the first two folders of the platform's own code. */
export function owner(path: string): string {
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  return path.split('/').slice(0, 3).join('/');
}

export function summarize(profile: CpuProfile, moduleOf: (url: string, line: number) => string) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id)!.callFrame;
    total += us;
    let group: string;
    if (frame.functionName === '(idle)') group = '(idle)';
    else if (frame.functionName === '(garbage collector)') group = '(garbage collector)';
    else if (frame.functionName === '(program)') group = '(program: V8 and native)';
    else if (!frame.url || frame.url.startsWith('node:')) group = '(node internals)';
    else group = owner(moduleOf(frame.url, frame.lineNumber));
    groups.set(group, (groups.get(group) ?? 0) + us);
    const fn = `${frame.functionName || '(anonymous)'}  [${group}]`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  });
  const ranked = (m: Map<string, number>) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000, share: us / total }));
  return { totalMs: total / 1000, groups: ranked(groups), functions: ranked(functions) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' } } });
  const file = positionals[0];
  if (!file || !existsSync(file)) {
    console.error('usage: pnpm profile:summary <file.cpuprofile> [--top 20]');
    process.exit(2);
  }
  const top = Number(values.top ?? 20);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const indexes = new Map<string, (line: number) => string>();
  const moduleOf = (url: string, line: number) => {
    if (!url.startsWith('file://')) return url;
    let index = indexes.get(url);
    if (!index) {
      index = moduleIndex(fileURLToPath(url));
      indexes.set(url, index);
    }
    return index(line);
  };
  const s = summarize(profile, moduleOf);
  const busy = s.totalMs - (s.groups.find((g) => g.name === '(idle)')?.ms ?? 0);
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)} %`;
  console.log(`${file}\n  profiled ${(s.totalMs / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(1)} s\n`);
  console.log('self time by owner:');
  for (const g of s.groups.slice(0, top))
    console.log(`  ${pct(g.share)}  ${g.ms.toFixed(0).padStart(7)} ms  ${g.name}`);
  console.log('\nself time by function:');
  for (const f of s.functions.slice(0, top))
    console.log(`  ${pct(f.share)}  ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}`);
}
