import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdktf';
import { loadManifest } from './src/manifest';
import { buildPlatform } from './src/platform';

// Another environment's manifest (staging, a load-test fleet) can be synthesized with CELLS_MANIFEST=<path>.
const manifestPath = process.env.CELLS_MANIFEST
  ? resolve(process.env.CELLS_MANIFEST)
  : fileURLToPath(new URL('./cells.json', import.meta.url));
const outdir = fileURLToPath(new URL('./cdktf.out', import.meta.url));

const app = new App({ outdir, stackTraces: false });
buildPlatform(app, loadManifest(manifestPath));
app.synth();

// cdktf leaves behind the directory of a stack that no longer exists; a removed cell must not stay
// applicable from cdktf.out. Current stacks keep their directories (and any .terraform inside).
const current = new Set(app.node.children.map((child) => child.node.id));
for (const dir of readdirSync(join(outdir, 'stacks'))) {
  if (!current.has(dir)) rmSync(join(outdir, 'stacks', dir), { recursive: true, force: true });
}
