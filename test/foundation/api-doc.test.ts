// docs/api.md is run, not just read: every `sh` block, in order, in one bash process (curl and jq) against a fresh
// server, and what it prints is compared with what the page says happens.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueSetupLink } from '../../src/modules/setup/service.js';
import { startApp, type TestApp } from '../support/app.js';
import { testDns } from '../support/dns.js';

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startApp();
  dir = mkdtempSync(join(tmpdir(), 'gh-api-doc-'));
}, 120_000);
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs the page's blocks in one bash process. `onLine` sees each printed line as it comes: the test plays the DNS
 * host and publishes a zone-file TXT line the page prints, as a reader would paste it there.
 */
function run(
  script: string,
  env: Record<string, string>,
  onLine: (line: string) => void,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...env },
    });
    let out = '';
    let err = '';
    let partial = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const lines = (partial + c.toString()).split('\n');
      partial = lines.pop() ?? '';
      lines.forEach(onLine);
    });
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

describe('docs/api.md', () => {
  it('every sh block runs, in order, against a fresh server, and prints what the page describes', async () => {
    const blocks = [...readFileSync('docs/api.md', 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    const link = await issueSetupLink(t.deps);
    const setupToken = new URL(link!).searchParams.get('token')!;
    const script = ['set -euo pipefail', ...blocks.map((b, i) => `echo "== block ${i + 1}"\n${b}`)].join('\n');
    const dns = await testDns();
    const zoneLine = /^(\S+)\. 300 IN TXT "(.+)"$/;
    const { code, out, err } = await run(script, { GH: `${t.baseUrl}/api/v1`, SETUP_TOKEN: setupToken }, (line) => {
      const m = zoneLine.exec(line);
      if (m) dns.publish(m[1]!, m[2]!);
    });
    expect(code, `${out}\n${err}`).toBe(0);
    expect(out).toContain(`== block ${blocks.length}`);
    // What the page says each step answers.
    expect(out).toMatch(/"name": "Acme MSP"/);
    expect(out).toMatch(/"mfaEnrollmentRequired": true/);
    expect(out).toMatch(/"code": "mfa_enrollment_required"/);
    expect(out).toMatch(/^10$/m);
    expect(out).toMatch(/"name": "Front desk"/);
    expect(out).toMatch(/"slug": "contoso-dental"/);
    expect(out).toMatch(/"name":"Organization Viewer"/);
    expect(out).toContain('["devices:execute"]');
    expect(out).toMatch(/^bob@contoso\.test invited Helpdesk$/m);
    expect(out).toMatch(/"email": "ada@acme\.test",\s+"status": "pending"/);
    expect(out).toMatch(/^\{"kind":"organization","tenantName":"Contoso Dental","roleName":"Organization Viewer"\}$/m);
    expect(out).toMatch(/^\{"code":"email_unverified"\}$/m);
    expect(out).toMatch(/^\{"success":true\}$/m);
    expect(out).toMatch(/"mfaRequired": true,\s+"mfaMethod": "totp"/);
    expect(out).toMatch(/"email": "ada@acme\.test",\s+"scope": "partner",\s+"mfaEnabled": true/);
    expect(out).toMatch(/Microsoft Entra ID/);
    expect(out).toMatch(/"txtName": "_gatehouse-challenge\.acme\.test"/);
    expect(out).toMatch(/^_gatehouse-challenge\.acme\.test\. 300 IN TXT "gatehouse-verification=[A-Za-z0-9_-]+"$/m);
    expect(out).toMatch(/^\{"domain":"acme\.test","status":"verified"\}$/m);
    expect(out).toMatch(/^\{"email":"ada@acme\.test","emailVerified":false\}$/m);
    expect(out).toMatch(/^\{"sent":true\}$/m);
    expect(out).toMatch(/^\{"code":"verification_invalid"\}$/m);
    expect(out).toMatch(/^\{"email":"ada@acme\.test","pendingEmail":"ada@mail\.acme\.test"\}$/m);
    expect(out).toMatch(/^20[04]\n401$/m);
  }, 120_000);
});
