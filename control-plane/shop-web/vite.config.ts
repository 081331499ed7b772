import { resolve } from 'node:path';
import { defineConfig } from 'vite';

/**
 * The buyer pages' one script and stylesheet, served by the control plane from shop-web/dist under fixed names
 * (the pages link them by name; served no-cache). Built by `pnpm --filter @onsale/control-plane build:shop`.
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
      output: { format: 'es', entryFileNames: 'shop.js', assetFileNames: 'shop[extname]' },
    },
  },
});
