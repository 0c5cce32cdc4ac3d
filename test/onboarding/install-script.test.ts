// The install commands the console shows for an enrollment key, run as they are shown: the Linux shell script run by
// bash against the real server enrols the host into the key's site and group and sends its first report; the curl
// one-liner enrols too; a used-up key stops the script with the server's words and no token written.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCommand } from '../../web/src/lib/install.js';
import { startApp, type TestApp } from '../support/app.js';
import { createDeviceGroup, createOrg, createSite, partnerAdmin } from '../support/fixtures.js';
import { createKey, expectStatus } from './helpers.js';

const run = promisify(execFile);
let t: TestApp;
beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_ENROLL: '10000/60' });
});
afterAll(async () => t?.close());

function scriptFile(text: string) {
  const dir = mkdtempSync(join(tmpdir(), 'gh-install-'));
  const file = join(dir, 'enrol-gatehouse.sh');
  writeFileSync(file, text);
  return { dir, file };
}

describe('the Linux install script, run by bash', () => {
  it('enrols the host into the key’s site and group and sends its first report', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const site = await createSite(t, org.id, 'Warehouse');
    const group = await createDeviceGroup(t, org.id, { name: 'Scanners', siteId: site.id });
    const key = await createKey(api, { orgId: org.id, siteId: site.id, deviceGroupId: group.id });
    const { dir, file } = scriptFile(installCommand('linux', { server: t.baseUrl, key: key.key }));
    const agentDir = join(dir, 'agent');
    const out = await run('bash', [file], {
      env: { PATH: process.env.PATH, GATEHOUSE_AGENT_DIR: agentDir, GATEHOUSE_AGENT_VERSION: '2.4.0' },
    });
    const hostname = (await run('hostname', [])).stdout.trim();
    expect(out.stdout).toMatch(new RegExp(`^Enrolled ${hostname} as device [0-9a-f-]{36}\\n$`));
    const deviceId = out.stdout.trim().split(' ').pop()!;

    const device = expectStatus(await api.get(`/devices/${deviceId}`), 200).body;
    expect(device).toMatchObject({
      orgId: org.id,
      siteId: site.id,
      deviceGroupIds: [group.id],
      hostname,
      osType: 'linux',
      agentVersion: '2.4.0',
      osVersion: expect.stringMatching(/\S/),
      lastSeenAt: expect.any(String),
    });
    expect(device.inventory!.hardware).toMatchObject({ hostname, kernel: expect.stringMatching(/\S/) });

    // The token is kept readable by its owner only, and it is the device's.
    const tokenFile = join(agentDir, 'agent-token');
    expect(statSync(tokenFile).mode & 0o077).toBe(0);
    const token = readFileSync(tokenFile, 'utf8').trim();
    const report = await t
      .client()
      .withToken(token)
      .post('/agents/inventory', { hardware: {}, software: [], patches: [] });
    expect(expectStatus(report, 200).body.deviceId).toBe(deviceId);

    // The key enrolled one device (its default maxUsage): the same script again is refused in the server's words.
    const again = await run('bash', [file], {
      env: { PATH: process.env.PATH, GATEHOUSE_AGENT_DIR: join(dir, 'again') },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining('enrollment_key_exhausted') });
    expect(() => statSync(join(dir, 'again', 'agent-token'))).toThrow();
  });

  it('the curl command enrols as it is shown', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const site = await createSite(t, org.id);
    const key = await createKey(api, { orgId: org.id, siteId: site.id });
    const { stdout } = await run('sh', ['-c', installCommand('curl', { server: t.baseUrl, key: key.key })]);
    const answer = JSON.parse(stdout) as { deviceId: string; siteId: string };
    expect(answer.siteId).toBe(site.id);
    expect(expectStatus(await api.get(`/devices/${answer.deviceId}`), 200).body.osType).toBe('linux');
  });
});
