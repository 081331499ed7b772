import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { bundlePath, PROCESS_NAMES, PROCESSES } from '@onsale/processes';
import { build } from 'esbuild';

/** What the last build read (every source file and dependency), to tell whether the bundles are stale. */
const STAMP = '.data/bundles/inputs.json';

/**
 * The development-only servers, by entry: no task runs them, so they are not in the catalog and their bundles stay
 * out of the packages' dist/bin, which the image copies. The local platform and the tests start them from these
 * bundles, as fast as the catalog's processes.
 */
const DEV_SERVERS: Record<string, string> = {
  'stripe-emulator/src/main.ts': '.data/bundles/dev/stripe-emulator.mjs',
  'control-plane/src/dev-identity/server.ts': '.data/bundles/dev/dev-identity.mjs',
};

/** Every bundle a build writes, by entry: the catalog's processes and the development servers. */
const BUNDLES: Record<string, string> = {
  ...Object.fromEntries(PROCESS_NAMES.map((name) => [PROCESSES[name].entry, bundlePath(name)])),
  ...DEV_SERVERS,
};

/**
 * Builds every process the stacks run into one ESM file each (`<package>/dist/bin/<name>.mjs`), which
 * the image runs with plain `node`: no tsx, no TypeScript and no dev dependencies at run time; and the
 * development servers beside them.
 */
export async function buildBundles(root = process.cwd()): Promise<string[]> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: Object.entries(BUNDLES).map(([entry, out]) => ({ in: entry, out: out.replace(/\.mjs$/, '') })),
    outdir: '.',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    sourcemap: true,
    // pg's optional native binding is never installed; CommonJS dependencies still call require().
    external: ['pg-native'],
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
    metafile: true,
    write: false,
  });
  // Each file is written beside the old one and renamed over it: a process starting meanwhile (another
  // engineer's platform, a second benchmark) loads a whole bundle, the old one or the new one.
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
  }
  const stamp = resolve(root, STAMP);
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(
    `${stamp}.${process.pid}.tmp`,
    JSON.stringify({ bundles: Object.values(BUNDLES), inputs: Object.keys(result.metafile.inputs) }),
  );
  renameSync(`${stamp}.${process.pid}.tmp`, stamp);
  return Object.values(BUNDLES);
}

/**
 * Why the bundles need building again, or null when they are current: one missing, a process added to
 * PROCESSES, or any file the last build read (sources, contracts, dependencies) changed since.
 */
export function staleBundles(root = process.cwd()): string | null {
  let stamp: { bundles?: string[]; inputs: string[] };
  try {
    stamp = JSON.parse(readFileSync(resolve(root, STAMP), 'utf8'));
  } catch {
    return 'never built here';
  }
  const outputs = Object.values(BUNDLES);
  if (stamp.bundles?.join() !== outputs.join()) return 'the list of bundles changed';
  let builtAt = Number.POSITIVE_INFINITY;
  for (const output of outputs) {
    try {
      builtAt = Math.min(builtAt, statSync(resolve(root, output)).mtimeMs);
    } catch {
      return `${output} is missing`;
    }
  }
  for (const input of stamp.inputs) {
    try {
      if (statSync(resolve(root, input)).mtimeMs > builtAt) return `${input} changed`;
    } catch {
      return `${input} is gone`;
    }
  }
  return null;
}

/** Builds the bundles when they are missing or stale; says what it did through `log`. */
export async function ensureBundles(root = process.cwd(), log: (line: string) => void = () => {}): Promise<void> {
  const reason = staleBundles(root);
  if (!reason) return;
  const started = performance.now();
  await buildBundles(root);
  log(`bundles built (${reason}) in ${Math.round(performance.now() - started)} ms`);
}

/**
 * The environment a bundle runs with: its compiled code is kept between starts (keyed by its contents), so every
 * later start of a process skips most of parsing and compiling its megabytes of JavaScript.
 */
export const bundleEnv = (root = process.cwd()) => ({ NODE_COMPILE_CACHE: resolve(root, '.data/compile-cache') });

/**
 * The command that runs `entry` from its bundle, as the image does, or undefined for an entry that has
 * none. With ONSALE_CPU_PROF_DIR set (profiling a benchmark), the process writes a V8 CPU profile
 * there when it exits (`pnpm profile:summary` reads it).
 */
export function bundleCommand(entry: string, root = process.cwd()): string[] | undefined {
  const bundle = BUNDLES[entry];
  const profile = process.env.ONSALE_CPU_PROF_DIR;
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  return bundle ? [process.execPath, ...flags, resolve(root, bundle)] : undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const built = await buildBundles();
  console.log(`built ${built.length} bundles:\n  ${built.join('\n  ')}`);
}
