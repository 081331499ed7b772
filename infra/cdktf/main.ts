import { fileURLToPath } from 'node:url';
import { App } from 'cdktf';
import { loadManifest } from './src/manifest';
import { buildPlatform } from './src/platform';

const manifest = loadManifest(fileURLToPath(new URL('./cells.json', import.meta.url)));
const app = new App({ outdir: fileURLToPath(new URL('./cdktf.out', import.meta.url)), stackTraces: false });
buildPlatform(app, manifest);
app.synth();
