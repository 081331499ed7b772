import { build } from 'esbuild';
import { bundlePath, PROCESS_NAMES, PROCESSES } from '../infra/cdktf/src/processes';

/**
 * Builds every process the stacks run into one ESM file each (`<package>/dist/bin/<name>.mjs`), which
 * the image runs with plain `node`: no tsx, no TypeScript and no dev dependencies at run time.
 */
export async function buildBundles(root = process.cwd()): Promise<string[]> {
  await build({
    absWorkingDir: root,
    entryPoints: PROCESS_NAMES.map((name) => ({
      in: PROCESSES[name].entry,
      out: bundlePath(name).replace(/\.mjs$/, ''),
    })),
    outdir: '.',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    sourcemap: true,
    // pg's optional native binding is never installed; CommonJS dependencies still call require().
    external: ['pg-native'],
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return PROCESS_NAMES.map(bundlePath);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const built = await buildBundles();
  console.log(`built ${built.length} bundles:\n  ${built.join('\n  ')}`);
}
