import { resolve } from 'node:path';
import { loadManifest, ManifestError } from './src/manifest';
import { formatPreflight, preflight } from './src/preflight';
import { synthesize } from './src/synthesized';

const USAGE = 'usage: pnpm infra preflight <manifest.json>';

/** `pnpm infra <command>`: operations on a manifest's synthesized stacks that need no AWS credentials. */
function main(argv: readonly string[]): number {
  const [command, manifestPath] = argv;
  if (command !== 'preflight' || !manifestPath) {
    console.error(USAGE);
    return 2;
  }
  try {
    const manifest = loadManifest(resolve(manifestPath));
    console.log(formatPreflight(manifest, preflight(manifest, synthesize(manifest))));
    return 0;
  } catch (error) {
    if (error instanceof ManifestError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

process.exitCode = main(process.argv.slice(2));
