// `npm run dev`: the API (tsx watch, restarts on change) and the console's Vite dev server (hot reload) together.
// Open the Vite address: it serves the console and proxies /api, /docs, /openapi.json and the probes to the API,
// so the browser sees one origin (cookies, CSRF, WebAuthn and SSO redirects work as in production).
import { spawn } from 'node:child_process';
import { createServer } from 'vite';

const vitePort = Number(process.env.WEB_PORT ?? 5173);
const apiPort = Number(process.env.PORT ?? 3000);
const origin = `http://localhost:${vitePort}`;

const apiProc = spawn(process.execPath, ['--import', 'tsx', '--watch', 'src/main.ts'], {
  stdio: 'inherit',
  env: {
    ...process.env,
    PORT: String(apiPort),
    PUBLIC_URL: process.env.PUBLIC_URL ?? origin,
    APP_URL: process.env.APP_URL ?? origin,
    LOG_FORMAT: process.env.LOG_FORMAT ?? 'pretty',
  },
});
process.env.GATEHOUSE_DEV_API = `http://127.0.0.1:${apiPort}`;
const web = await createServer({
  configFile: 'web/vite.config.ts',
  server: { port: vitePort, strictPort: true, host: 'localhost' },
});
await web.listen();
web.printUrls();

const stop = async () => {
  apiProc.kill('SIGTERM');
  await web.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
apiProc.on('exit', (code) => {
  if (code !== null && code !== 0) console.error(`the API exited with ${code}`);
});
