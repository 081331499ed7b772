import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdktf';
import { loadManifest } from './src/manifest';
import { buildPlatform } from './src/platform';

// Another environment's manifest (staging, a load-test fleet) can be synthesized with CELLS_MANIFEST=<path>.
const manifestPath = process.env.CELLS_MANIFEST
  ? resolve(process.env.CELLS_MANIFEST)
  : fileURLToPath(new URL('./cells.json', import.meta.url));

const app = new App({ outdir: fileURLToPath(new URL('./cdktf.out', import.meta.url)), stackTraces: false });
buildPlatform(app, loadManifest(manifestPath));
app.synth();
