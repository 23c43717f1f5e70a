/// <reference types="vitest/config" />
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The gateway serves the built UI at "/" (same origin) and falls back to index.html for
// client routes; in development Vite proxies the API paths to the gateway on :3000.
const GATEWAY = process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/',
  plugins: [react()],
  server: {
    port: 5173,
    strictPort: true,
    proxy: {
      '/api': { target: GATEWAY, changeOrigin: true },
      '/auth': { target: GATEWAY, changeOrigin: true },
      '/health': { target: GATEWAY, changeOrigin: true },
      '/ws': { target: GATEWAY, changeOrigin: true, ws: true },
    },
  },
  preview: {
    port: 4173,
    proxy: {
      '/api': { target: GATEWAY, changeOrigin: true },
      '/auth': { target: GATEWAY, changeOrigin: true },
      '/health': { target: GATEWAY, changeOrigin: true },
      '/ws': { target: GATEWAY, changeOrigin: true, ws: true },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
  },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
    // the form tests type character by character: 5 s (the default) is too little for them
    // on a busy machine (make test runs the services' suites beside them)
    testTimeout: 15_000,
    // one test process per core (the default leaves one idle: 65 s instead of 43 s on 2 cores)
    maxWorkers: '100%',
    unstubGlobals: true,
  },
});
