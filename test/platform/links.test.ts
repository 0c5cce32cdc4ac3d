// Links that work on the first click: with only PORT (or HOST) set, every link the service hands out names the
// address it listens on; PUBLIC_URL and APP_URL win when set; `gatehouse config check` says when they disagree.
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../scripts/built-server.js';
import { listenerOrigin, loadConfig } from '../../src/config.js';
import { listenerMismatches, withListenPort } from '../../src/config-listener.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { freePort, startApp, type TestApp } from '../support/app.js';
import { pgliteTemplateDir } from '../support/db.js';
import { createOrg, partnerAdmin } from '../support/fixtures.js';
import { callbackFor, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { cliDatabase, type CliDb, ROOT, STRONG } from '../cli/helpers.js';
import { orgWithProvider } from '../sso/helpers.js';

const ORG_VIEWER = SYSTEM_ROLES[5]!.id as string;

describe('the origin links name follows the listener', () => {
  it('only PORT: both origins are http://localhost:<PORT>', () => {
    const c = loadConfig({ PORT: '4123' });
    expect([c.publicUrl, c.appUrl, c.listenerOrigin]).toEqual(Array(3).fill('http://localhost:4123'));
  });

  it.each([
    ['0.0.0.0', 'http://localhost:4123'],
    ['::', 'http://localhost:4123'],
    ['127.0.0.1', 'http://localhost:4123'],
    ['127.0.1.1', 'http://localhost:4123'],
    ['::1', 'http://localhost:4123'],
    ['localhost', 'http://localhost:4123'],
    ['10.1.2.3', 'http://10.1.2.3:4123'],
    ['fd00::5', 'http://[fd00::5]:4123'],
    ['gate.lan', 'http://gate.lan:4123'],
  ])('HOST=%s gives %s (a wildcard or loopback host is opened as localhost)', (host, origin) => {
    expect(listenerOrigin(host, 4123)).toBe(origin);
    expect(loadConfig({ HOST: host, PORT: '4123' }).publicUrl).toBe(origin);
  });

  it('PUBLIC_URL wins and APP_URL follows it; APP_URL wins for the console', () => {
    const pub = loadConfig({ PORT: '4123', PUBLIC_URL: 'https://id.example.com/' });
    expect([pub.publicUrl, pub.appUrl]).toEqual(['https://id.example.com', 'https://id.example.com']);
    const both = loadConfig({
      PORT: '4123',
      PUBLIC_URL: 'https://id.example.com',
      APP_URL: 'https://admin.example.com',
    });
    expect([both.publicUrl, both.appUrl]).toEqual(['https://id.example.com', 'https://admin.example.com']);
    const appOnly = loadConfig({ PORT: '4123', APP_URL: 'http://localhost:5173' });
    expect([appOnly.publicUrl, appOnly.appUrl]).toEqual(['http://localhost:4123', 'http://localhost:5173']);
  });

  it('PORT=0: once the system picked a port, the origins not set by the operator name it', () => {
    const c = withListenPort(loadConfig({ PORT: '0' }), 40123);
    expect([c.port, c.publicUrl, c.appUrl]).toEqual([40123, 'http://localhost:40123', 'http://localhost:40123']);
    expect(Object.isFrozen(c)).toBe(true);
    const pinned = withListenPort(loadConfig({ PORT: '0', PUBLIC_URL: 'https://id.example.com' }), 40123);
    expect([pinned.publicUrl, pinned.appUrl]).toEqual(['https://id.example.com', 'https://id.example.com']);
  });
});

describe('a PUBLIC_URL or APP_URL on this machine but another port is named (development)', () => {
  it('a local URL on another port is named; the listener, a remote host, production and unset are not', () => {
    const hints = listenerMismatches(loadConfig({ PORT: '4123', PUBLIC_URL: 'http://localhost:3000' }));
    expect(hints).toHaveLength(1);
    expect(hints[0]).toMatch(
      /^PUBLIC_URL \(http:\/\/localhost:3000\) names port 3000 but the server listens on .*:4123/,
    );
    expect(listenerMismatches(loadConfig({ PORT: '4123', APP_URL: 'http://127.0.0.1:3000' }))[0]).toMatch(/^APP_URL/);
    expect(listenerMismatches(loadConfig({ PORT: '4123', PUBLIC_URL: 'http://localhost:4123' }))).toEqual([]);
    expect(listenerMismatches(loadConfig({ PORT: '4123', PUBLIC_URL: 'https://id.example.com' }))).toEqual([]);
    expect(listenerMismatches(loadConfig({ PORT: '4123' }))).toEqual([]);
  });
});

describe('the CLI names the listener too', () => {
  let c: CliDb;
  beforeAll(async () => {
    c = await cliDatabase();
  }, 120_000);
  afterAll(async () => c?.drop());
  const onlyPort = { PORT: '4123', PUBLIC_URL: '', APP_URL: '' };

  it('config check: effective origins follow PORT; a mismatching PUBLIC_URL is warned about', async () => {
    const r = await c.run(['config', 'check', '--json'], { env: onlyPort });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().config).toMatchObject({ publicUrl: 'http://localhost:4123', appUrl: 'http://localhost:4123' });
    expect(r.json().warnings).toEqual([]);
    const warned = await c.run(['config', 'check'], { env: { ...onlyPort, PUBLIC_URL: 'http://localhost:3000' } });
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stdout).toMatch(/^warning: PUBLIC_URL \(http:\/\/localhost:3000\) names port 3000 but the server/m);
  }, 60_000);

  it('setup names the sign-in page on the listener', async () => {
    const r = await c.run(
      ['setup', '--company', 'Port Co', '--email', 'port@example.com', '--name', 'Port Admin', '--password-stdin'],
      { env: onlyPort, stdin: `${STRONG}\n` },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('can sign in at http://localhost:4123/login');
  }, 60_000);
});

describe('a service started with only PORT mails and redirects to the address it listens on', () => {
  let t: TestApp;
  let mail: MailCatcher;
  let idp: TestIdp;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    mail = await startMailCatcher();
    idp = await startOidcProvider({ redirectUris: [callbackFor(`http://localhost:${port}`)] });
    t = await startApp({
      PORT: String(port),
      PUBLIC_URL: '',
      APP_URL: '',
      SMTP_URL: mail.url,
      SSO_ALLOW_INSECURE_ISSUERS: 'true',
    });
  });
  afterAll(async () => {
    await t?.close();
    await mail?.close();
    await idp?.close();
  });

  it('the invitation link opens the console on that port, and its token is accepted there', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const to = `port-${port}@example.test`;
    const inv = await api.post('/users/invite', { email: to, name: 'Port Invitee', roleId: ORG_VIEWER, orgId: org.id });
    expect(inv.status, inv.text).toBe(201);
    const m = await mail.waitFor(to);
    const link = /https?:\/\/\S+accept-invite\?token=\S+/.exec(m.text)![0];
    expect(link.startsWith(`http://localhost:${port}/accept-invite?token=`)).toBe(true);
    const page = await fetch(link, { headers: { accept: 'text/html' } }); // a browser's navigation
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const accepted = await t.client().post('/auth/accept-invite', { token: linkToken(m), password: STRONG });
    expect(accepted.status, accepted.text).toBe(200);
  });

  it('the reset link names that port', async () => {
    const { user } = await partnerAdmin(t);
    expect((await t.client().post('/auth/forgot-password', { email: user.email })).status).toBe(200);
    const m = await mail.waitFor(user.email, (x) => x.subject === 'Reset your password');
    expect(m.text).toContain(`http://localhost:${port}/reset-password?token=`);
  });

  it('the SSO redirect URI sent to the identity provider names that port', async () => {
    const { org } = await orgWithProvider(t, idp);
    const res = await fetch(`http://localhost:${port}/api/v1/sso/login/${org.id}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(to.searchParams.get('redirect_uri')).toBe(`http://localhost:${port}/api/v1/sso/callback`);
  });
});

describe('the built server started with only PORT prints links on that port', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  // Built by the run's global setup; rebuilding here would delete the chunks of a server another file is running.
  beforeAll(() => ensureBuilt(), 120_000);
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function startBuilt(env: Record<string, string>) {
    const dir = mkdtempSync(join(tmpdir(), 'gh-links-'));
    dirs.push(dir);
    cpSync(join(pgliteTemplateDir(), 'pg'), join(dir, 'pg'), { recursive: true });
    const child = spawn(process.execPath, ['dist/main.js'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATA_DIR: dir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const end = Date.now() + 90_000;
    while (!/First run: .*\/setup\?token=\S+/.test(out)) {
      if (child.exitCode !== null || Date.now() > end) throw new Error(`no setup link:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const ready = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, string>)
      .find((l) => l.msg === 'gatehouse ready')!;
    const link = /First run: .* at (\S+)/.exec(out)![1]!;
    child.kill('SIGTERM');
    return { ready, link };
  }

  it('PORT=<free port>: the ready line and the setup link name it, and the link opens', async () => {
    const port = await freePort();
    const { ready, link } = await startBuilt({ PORT: String(port) });
    const base = `http://localhost:${port}`;
    expect(ready).toMatchObject({ api: `${base}/api/v1`, docs: `${base}/docs`, console: `${base}/` });
    expect(link.startsWith(`${base}/setup?token=`)).toBe(true);
  }, 120_000);

  it('PORT=0: the links name the port the system picked, and it answers there', async () => {
    const { ready, link } = await startBuilt({ PORT: '0' });
    const port = Number(/:(\d+)\//.exec(ready.api!)![1]);
    expect(port).toBeGreaterThan(0);
    expect(ready.listen).toBe(`127.0.0.1:${port}`);
    expect(link.startsWith(`http://localhost:${port}/setup?token=`)).toBe(true);
  }, 120_000);
});
