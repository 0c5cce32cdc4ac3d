// The admin console's build (`npm run build:web` → web/dist) and dev server (`npm run dev`, proxying the API).
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
/** Where `npm run dev` runs the API (scripts/dev.ts sets it); the dev server proxies the API paths there. */
const api = process.env.GATEHOUSE_DEV_API ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root,
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // No inline <script> in index.html and no data: module preloads: the server's CSP is `script-src 'self'`.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 800,
  },
  server: {
    proxy: Object.fromEntries(
      ['/api', '/openapi.json', '/docs', '/healthz', '/readyz', '/metrics'].map((p) => [
        p,
        { target: api, changeOrigin: false },
      ]),
    ),
  },
});
