// Builds the Northwind sample customer through the public API. Usage: npx tsx examples/onboarding/onboard.ts
// Environment: GATEHOUSE_URL (default http://localhost:3000), ADMIN_EMAIL, ADMIN_PASSWORD (defaults below); or
// import { onboard } and pass { baseUrl } (the tests do).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { Secret, TOTP } from 'otpauth';

const here = dirname(fileURLToPath(import.meta.url));
const csv = (name: string) => readFileSync(join(here, name), 'utf8');

export interface OnboardOptions {
  /** The service's origin; default GATEHOUSE_URL or http://localhost:3000. */
  baseUrl?: string;
  email?: string;
  password?: string;
  log?: (msg: string) => void;
}

export async function onboard(opts: OnboardOptions = {}) {
  const base = (opts.baseUrl ?? process.env.GATEHOUSE_URL ?? 'http://localhost:3000').replace(/\/$/, '');
  const email = opts.email ?? process.env.ADMIN_EMAIL ?? `admin+${randomBytes(3).toString('hex')}@msp.example`;
  const password = opts.password ?? process.env.ADMIN_PASSWORD ?? 'Northwind onboarding passphrase 2026!';
  const log = opts.log ?? ((msg: string) => console.log(`• ${msg}`));
  let token: string | null = null;
  async function call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<T> {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': contentType } : {}),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : {};
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${json.code ?? ''}: ${json.message ?? text}`);
    return json as T;
  }

  const reg = await call('POST', '/auth/register-partner', {
    companyName: 'Example MSP',
    email,
    password,
    name: 'MSP Admin',
  });
  token = reg.accessToken;
  log(`partner "${reg.partner.name}" registered; admin ${email}`);
  if (reg.mfaEnrollmentRequired) {
    const setup = await call('POST', '/auth/mfa/setup');
    const totp = new TOTP({ secret: Secret.fromBase32(setup.secret), digits: 6, period: 30, algorithm: 'SHA1' });
    const enabled = await call('POST', '/auth/mfa/enable', { code: totp.generate() });
    token = enabled.accessToken;
    log('admin enrolled an authenticator app (Partner Admin requires MFA)');
  }
  const org = await call('POST', '/orgs/organizations', { name: 'Northwind Traders' });
  log(`organization ${org.name} (${org.id})`);
  const sites: Record<string, string> = {};
  for (const row of parse(csv('sites.csv'), { columns: true, trim: true }) as {
    name: string;
    timezone: string;
    address: string;
  }[]) {
    const site = await call('POST', '/orgs/sites', { orgId: org.id, ...row });
    sites[site.name] = site.id;
  }
  log(`sites: ${Object.keys(sites).join(', ')}`);
  const group = await call('POST', '/device-groups', {
    orgId: org.id,
    siteId: sites['Northwind HQ'],
    name: 'HQ workstations',
  });
  const devicesPlanned = 3;
  const key = await call('POST', '/enrollment-keys', {
    orgId: org.id,
    siteId: sites['Northwind HQ'],
    name: 'Northwind wave 1',
    maxUsage: Math.ceil(devicesPlanned * 1.2),
    expiresAt: new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString(),
  });
  log(`enrollment key for ${key.maxUsage} devices, pinned to HQ, valid until ${key.expiresAt}`);
  const first = await call('POST', `/contacts/import?orgId=${org.id}`, csv('contacts.csv'), 'text/csv');
  log(`contacts import: ${JSON.stringify(first.summary)}`);
  const second = await call('POST', `/contacts/import?orgId=${org.id}`, csv('contacts.csv'), 'text/csv');
  log(`contacts re-import: ${JSON.stringify(second.summary)}`);
  for (const [k, name, type] of [
    ['asset_tag', 'Asset tag', 'text'],
    ['warranty_end', 'Warranty end', 'date'],
    ['critical', 'Business critical', 'boolean'],
  ] as const) {
    await call('POST', '/custom-fields', { key: k, name, type, entityType: 'device' });
  }
  log('custom fields: asset_tag, warranty_end, critical (partner-wide)');
  const enrolled = [];
  for (const hostname of ['NW-HQ-001', 'NW-HQ-002', 'NW-LDS-001']) {
    const saved = token;
    token = null;
    enrolled.push(
      await call('POST', '/agents/enroll', {
        enrollmentKey: key.key,
        hostname,
        osType: 'windows',
        osVersion: '11 23H2',
        agentVersion: '2.4.0',
      }),
    );
    token = saved;
  }
  await call('POST', `/device-groups/${group.id}/devices`, { deviceIds: enrolled.slice(0, 2).map((d) => d.deviceId) });
  log(`enrolled ${enrolled.length} agents; 2 in "HQ workstations"`);
  const wizard = {
    orgId: org.id,
    entityType: 'device',
    csv: csv('device-fields.csv'),
    matchColumn: 'hostname',
    mapping: { asset_tag: 'asset_tag', warranty_end: 'warranty_end', critical: 'critical' },
  };
  const preview = await call('POST', '/custom-fields/import/preview', wizard);
  log(`custom-field preview: ${JSON.stringify(preview.summary)}`);
  const commit = await call('POST', '/custom-fields/import/commit', wizard);
  log(`custom-field commit: ${JSON.stringify(commit.summary)}`);
  return {
    partnerId: reg.partner.id as string,
    orgId: org.id as string,
    sites,
    keyId: key.id as string,
    contacts: [first.summary, second.summary],
    devices: enrolled.map((d) => d.deviceId as string),
    customFields: { preview: preview.summary, commit: commit.summary },
    /** The admin's access token, for a caller that wants to look at the result. */
    accessToken: token as string,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  onboard().then(
    () => console.log('done'),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
