import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

/** The rich-text model the service validates with: one definition, imported by the console's editor. */
const richTextFolder = decodeURIComponent(new URL('../src/domain/content/rich-text/', import.meta.url).pathname);

// Served by the service at /console (src/http/console/console-routes.ts): hashed file names under
// assets/ are cached as immutable; index.html is answered for every other /console path.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  resolve: {
    alias: [
      { find: /^@annals\/rich-text$/, replacement: `${richTextFolder}index.ts` },
      { find: /^@annals\/rich-text\/(.+)$/, replacement: `${richTextFolder}$1` },
    ],
  },
  // The dev server may read the model's folder, outside console/.
  server: { fs: { allow: ['..'] } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline script anywhere: the service's CSP has no 'unsafe-inline'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 700,
  },
});
