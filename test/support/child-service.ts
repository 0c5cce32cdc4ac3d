// The service as its own process (src/main.ts through tsx) on a test app's database, for kill -9 tests: SIGKILL is a
// real one (no shutdown hook, no finally block; the database ends the connection and rolls back what was open).
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, type TestApp } from './app.js';

export interface Child {
  proc: ChildProcess;
  origin: string;
}

/** Starts the service on `t`'s database and environment (plus `env`); resolves once /readyz answers 200. */
export async function spawnService(t: TestApp, env: Record<string, string> = {}): Promise<Child> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: process.cwd(),
    // The same PUBLIC_URL as the in-process app: tokens it signs name that issuer.
    env: {
      ...process.env,
      ...t.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'test',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const until = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`service exited (${proc.exitCode}): ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return { proc, origin };
    if (Date.now() > until) throw new Error(`service did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function kill9(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode) return;
  await new Promise<void>((resolve) => {
    child.proc.once('exit', () => resolve());
    child.proc.kill('SIGKILL');
  });
}
