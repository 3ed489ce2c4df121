import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Served by the service at /console (src/http/console/console-routes.ts): hashed file names under
// assets/ are cached as immutable; index.html is answered for every other /console path.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
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
