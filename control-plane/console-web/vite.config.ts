import { resolve } from 'node:path';
import { defineConfig } from 'vite';

/**
 * The console's one script and stylesheet, served by the control plane from console-web/dist
 * with fixed names (the pages link them by name; the control plane serves them no-cache).
 * Built by `pnpm --filter @onsale/control-plane build:console` (scripts/platform runs it).
 */
export default defineConfig({
  root: import.meta.dirname,
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: resolve(import.meta.dirname, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    rollupOptions: {
      input: resolve(import.meta.dirname, 'src/main.ts'),
      output: {
        format: 'es',
        entryFileNames: 'console.js',
        assetFileNames: 'console[extname]',
      },
    },
  },
});
