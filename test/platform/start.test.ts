// `npm start` as a newcomer runs it: the compiled server (dist/, rebuilt by the test run's global setup when src/ is
// newer, as `npm ci` builds it) started by npm, on an embedded database without any partner. One setup link line, a
// start line naming the URLs, one log line per request (none for probes), SIGTERM to the npm process stops the
// server, and start failures are one clear line.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/connect.js';
import { freePort } from '../support/app.js';
import { pgliteTemplateDir } from '../support/db.js';

const ROOT = join(import.meta.dirname, '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
const children: ChildProcess[] = [];

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gh-start-'));
  cpSync(join(pgliteTemplateDir(), 'pg'), join(dir, 'pg'), { recursive: true }); // a migrated, empty database
  dirs.push(dir);
  return dir;
}

function start(cmd: string[], env: Record<string, string>) {
  const child = spawn(cmd[0]!, cmd.slice(1), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const waitFor = async (re: RegExp, ms = 120_000) => {
    const end = Date.now() + ms;
    while (!re.test(out.stdout)) {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}\n${out.stdout}\n${out.stderr}`);
      if (Date.now() > end) throw new Error(`no ${re} in\n${out.stdout}\n${out.stderr}`);
      await sleep(50);
    }
  };
  return { child, out, exited, waitFor };
}

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const logLines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Warning lines that name a security switch (the generated development key has a warning of its own). */
const switchWarnings = (stdout: string) =>
  logLines(stdout)
    .filter(
      (l) =>
        l.level === 40 &&
        /^(SSO_ALLOW_INSECURE_ISSUERS|WEBHOOKS_ALLOW_INSECURE|DATABASE_ROW_SECURITY):/.test(String(l.msg)),
    )
    .map((l) => String(l.msg));

describe('npm start on an empty database', () => {
  it('prints one setup link, a start line naming the URLs, one line per request (none for probes); SIGTERM to npm stops it', async () => {
    const port = await freePort();
    const dir = dataDir();
    const s = start(['npm', 'start', '--silent'], {
      PORT: String(port),
      DATA_DIR: dir,
      PUBLIC_URL: `http://localhost:${port}`,
      APP_URL: `http://localhost:${port}`,
    });
    await s.waitFor(/First run: .*\/setup\?token=/);
    const setupLines = s.out.stdout.split('\n').filter((l) => l.includes('/setup?token='));
    expect(setupLines).toHaveLength(1);
    expect(setupLines[0]).toMatch(
      new RegExp(
        `^First run: create the first partner and administrator at http://localhost:${port}/setup\\?token=[\\w-]{40,} \\(single use, valid 1 hour`,
      ),
    );
    const ready = logLines(s.out.stdout).find((l) => l.msg === 'gatehouse ready')!;
    expect(ready).toMatchObject({
      api: `http://localhost:${port}/api/v1`,
      docs: `http://localhost:${port}/docs`,
      console: `http://localhost:${port}/`,
      mode: 'development', // npm start does not set NODE_ENV
    });
    expect(switchWarnings(s.out.stdout)).toEqual([]); // no security switch on, none warned of

    const base = `http://127.0.0.1:${port}`;
    for (const p of ['/healthz', '/readyz', '/metrics']) expect((await fetch(base + p)).status).toBe(200);
    const status = await fetch(`${base}/api/v1/setup/status?token=abc123secret`, {
      headers: { 'x-request-id': 'start-test-1' },
    });
    expect(await status.json()).toEqual({ needed: true });
    await sleep(300);
    const requests = logLines(s.out.stdout).filter((l) => l.msg === 'request');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      level: 30,
      reqId: 'start-test-1',
      method: 'GET',
      status: 200,
      url: '/api/v1/setup/status?token=[REDACTED]',
    });
    expect(typeof requests[0]!.ms).toBe('number');
    expect(s.out.stdout).not.toContain('abc123secret');

    s.child.kill('SIGTERM'); // the npm process, as a supervisor or Ctrl-C would
    const code = await Promise.race([s.exited, sleep(30_000).then(() => 'timeout')]);
    expect(code).not.toBe('timeout');
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    expect(s.out.stdout).toContain('shutdown complete');

    const again = start(['node', 'dist/main.js'], { PORT: String(port), DATA_DIR: dir, LOG_FORMAT: 'pretty' });
    await again.waitFor(/First run: .*\/setup\?token=/); // printed again until setup is done (a new link)
    expect(again.out.stdout).toMatch(/gatehouse ready/);
    expect(again.out.stdout.split('\n').some((l) => l.startsWith('{'))).toBe(false); // pretty, not JSON
    again.child.kill('SIGTERM');
    await again.exited;
  }, 240_000);
});

describe('the security switches: one warning each outside production, a refusal in production', () => {
  it('in development the server starts and warns once per switch that is on, before the ready line', async () => {
    const port = await freePort();
    const s = start(['node', 'dist/main.js'], {
      PORT: String(port),
      DATA_DIR: dataDir(),
      SSO_ALLOW_INSECURE_ISSUERS: 'true',
      WEBHOOKS_ALLOW_INSECURE: 'true',
    });
    await s.waitFor(/gatehouse ready/);
    const lines = logLines(s.out.stdout);
    const warnings = switchWarnings(s.out.stdout);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^SSO_ALLOW_INSECURE_ISSUERS: .*\(development only; production refuses it\)$/);
    expect(warnings[1]).toMatch(/^WEBHOOKS_ALLOW_INSECURE: .*\(development only; production refuses it\)$/);
    expect(lines.find((l) => l.msg === 'gatehouse ready')).toMatchObject({ mode: 'development' });
    s.child.kill('SIGTERM');
    await s.exited;
  }, 120_000);

  it('in production a switch that is on stops the start in one line naming it (exit 78), before anything opens', async () => {
    const s = start(['node', 'dist/main.js'], {
      NODE_ENV: 'production',
      PORT: String(await freePort()),
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      DATABASE_URL: 'postgres://gatehouse@127.0.0.1:1/gatehouse',
      PUBLIC_URL: 'https://id.example.com',
      SMTP_URL: 'smtp://127.0.0.1:2525',
      WEBHOOKS_ALLOW_INSECURE: 'true',
    });
    expect(await s.exited).toBe(78);
    const lines = s.out.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^gatehouse: cannot start: invalid configuration: WEBHOOKS_ALLOW_INSECURE: refused in production \(.+\); unset it$/,
    );
    expect(s.out.stdout).toBe('');
  }, 60_000);
});

describe('a start that fails says why in one line, naming the variable to change', () => {
  it('a port in use names PORT', async () => {
    const blocker = createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)),
    );
    try {
      const s = start(['node', 'dist/main.js'], { PORT: String(port), DATA_DIR: dataDir() });
      expect(await s.exited).toBe(1);
      const lines = s.out.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        `gatehouse: cannot start: 127.0.0.1:${port} is already in use by another process; set PORT to a free port (or stop the other process).`,
      );
    } finally {
      blocker.close();
    }
  }, 120_000);

  it('a data directory held by another process names DATA_DIR', async () => {
    const dir = dataDir();
    const held = await openPglite(dir);
    try {
      const s = start(['node', 'dist/main.js'], { PORT: String(await freePort()), DATA_DIR: dir });
      expect(await s.exited).toBe(1);
      const lines = s.out.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^gatehouse: cannot start: Data directory .* is in use by process \d+.*set DATA_DIR to another directory\.$/,
      );
    } finally {
      await held.close();
    }
  }, 120_000);

  it('an unreachable PostgreSQL names DATABASE_URL without its password', async () => {
    const port = await freePort();
    const s = start(['node', 'dist/main.js'], {
      PORT: String(await freePort()),
      DATABASE_URL: `postgres://app:hunter2pw@127.0.0.1:${port}/gh`,
    });
    expect(await s.exited).toBe(1);
    const lines = s.out.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `gatehouse: cannot start: PostgreSQL at postgres://127.0.0.1:${port}/gh is unreachable (ECONNREFUSED); check DATABASE_URL and that the server runs.`,
    );
  }, 120_000);
});
