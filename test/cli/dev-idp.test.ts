// Trying single sign-on on one machine: `gatehouse dev-idp` starts an OpenID Provider on loopback, and a server in
// development mode (DEV_MODE, not the test-only switches) accepts it as an issuer; a sign-in through it runs the whole
// redirect chain and ends with tokens. Development mode is refused in production, and reaches loopback only.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { assertPublicUrl } from '../../src/platform/outbound.js';
import { startApp, type TestApp } from '../support/app.js';
import { proveDomain } from '../support/dns.js';
import { callbackFor, runSsoLogin } from '../support/oidc.js';
import { createActiveProvider, exchange, freshDomain, ORG_TECHNICIAN_ROLE_ID, tenant } from '../sso/helpers.js';
import { ROOT } from './helpers.js';

let t: TestApp;
let child: ChildProcessWithoutNullStreams | undefined;
beforeAll(async () => {
  t = await startApp({ DEV_MODE: 'true' });
});
afterAll(async () => {
  child?.kill('SIGTERM');
  await t?.close();
});

/** `gatehouse dev-idp --json` from the sources; resolves with what it printed once it listens. */
function startDevIdp(email: string) {
  child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli/main.ts',
      'dev-idp',
      '--port',
      '0',
      '--email',
      email,
      '--redirect-uri',
      callbackFor(t.baseUrl),
      '--json',
    ],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'development' } },
  );
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  return new Promise<{ issuer: string; clientId: string; clientSecret: string; email: string }>((resolve, reject) => {
    child!.stdout.on('data', (d) => {
      out += d;
      if (out.trimEnd().endsWith('}')) resolve(JSON.parse(out));
    });
    child!.once('exit', (code) => reject(new Error(`dev-idp exited ${code}: ${err}`)));
  });
}

describe('gatehouse dev-idp and development mode', () => {
  it('the readiness probe says development mode is on', async () => {
    const res = await fetch(`${t.baseUrl}/readyz`);
    expect(await res.json()).toMatchObject({ status: 'ready', devMode: true });
  });

  it('starts, and a sign-in through it runs end to end and ends with tokens for the user', async () => {
    const s = await tenant(t);
    const domain = freshDomain();
    await proveDomain(s.api, domain, s.org.id);
    const idp = await startDevIdp(`ada@${domain}`);
    expect(idp.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // An http issuer on loopback: accepted because of development mode alone.
    const provider = await createActiveProvider(s.api, idp, s.org.id, {
      allowedDomains: domain,
      autoProvision: true,
      defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
    });
    expect(provider.orgId).toBe(s.org.id);
    const r = await runSsoLogin(t, s.org.id, { redirect: '/' });
    expect(r.error, r.location ?? '').toBeNull();
    expect(r.ssoCode).toEqual(expect.any(String));
    const tokens = await exchange(t, r.ssoCode!);
    expect(tokens.status, tokens.text).toBe(200);
    expect(tokens.body.user.email).toBe(`ada@${domain}`);
  });

  it('development mode reaches loopback only, and production refuses it', async () => {
    await expect(assertPublicUrl(new URL('http://127.0.0.1:4010/'), 'The issuer', 'loopback')).resolves.toBeUndefined();
    await expect(assertPublicUrl(new URL('http://localhost:4010/'), 'The issuer', 'loopback')).resolves.toBeUndefined();
    await expect(assertPublicUrl(new URL('http://[::1]:4010/'), 'The issuer', 'loopback')).resolves.toBeUndefined();
    for (const url of ['http://10.0.0.5/', 'https://192.168.1.10/', 'http://169.254.169.254/'])
      await expect(assertPublicUrl(new URL(url), 'The issuer', 'loopback')).rejects.toThrow(/https|private/);
    await expect(assertPublicUrl(new URL('http://127.0.0.1:4010/'), 'The issuer', 'public')).rejects.toThrow(
      /must use https/,
    );
    // Through the API as well: a webhook on another private network is still refused in development mode.
    const s = await tenant(t);
    const refused = await s.api.post('/webhooks', { url: 'http://10.0.0.5/hook', events: ['auth.login'] });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    const local = await s.api.post('/webhooks', { url: 'http://localhost:9/hook', events: ['auth.login'] });
    expect(local.status, local.text).toBe(201);

    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        DEV_MODE: 'true',
        DATABASE_URL: 'postgres://db/gatehouse',
        PUBLIC_URL: 'https://id.example.com',
        SMTP_URL: 'smtp://mail.example.com',
        ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      }),
    ).toThrow(/DEV_MODE: refused in production/);
  });
});
