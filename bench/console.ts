// The console's budgets, measured in Debian's Chromium against the real server (PGlite):
//  - initial JavaScript of the sign-in page ≤ 200 KB gzip (every script the page loads until the form is usable);
//  - sign-in page loaded and interactive ≤ 1 s (navigation → the "Sign in" button visible and enabled), cold cache;
//  - the users page with 10,000 users lists its first page ≤ 300 ms after navigation (in-app link click → rows shown).
// Median of 5 runs each. Exits 1 when a budget is missed.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { organizationUsers, users } from '../src/db/schema/index.js';
import { ORG_ADMIN_ROLE_ID } from '../src/modules/roles/catalog.js';
import { startApp } from '../test/support/app.js';
import { prepareTemplate } from '../test/support/db.js';
import { addOrgMember, createOrg, createPartner, createUser } from '../test/support/fixtures.js';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const RUNS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (!existsSync('web/dist/index.html'))
  execFileSync('npx', ['vite', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });

await prepareTemplate();
const t = await startApp({ LOG_LEVEL: 'warn' });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: FLAGS,
});
let failed = false;
const report = (name: string, value: number, unit: string, budget: number) => {
  const ok = value <= budget;
  if (!ok) failed = true;
  console.log(
    `${name.padEnd(44)} ${value.toFixed(1).padStart(8)} ${unit.padEnd(3)} budget ${budget} ${unit}  ${ok ? 'ok' : 'OVER'}`,
  );
};

try {
  // 1 and 2: the sign-in page, cold (a new context per run: empty cache).
  const sizes: number[] = [];
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const scripts: Promise<number>[] = [];
    page.on('response', (res) => {
      if (/javascript/.test(res.headers()['content-type'] ?? ''))
        scripts.push(res.body().then((b) => gzipSync(b).length));
    });
    const start = performance.now();
    await page.goto(`${t.baseUrl}/login`);
    const button = page.getByRole('button', { name: 'Sign in', exact: true });
    await button.waitFor({ state: 'visible' });
    await page.waitForFunction(() =>
      [...document.querySelectorAll('button')].some((b) => b.textContent === 'Sign in' && !b.disabled),
    );
    times.push(performance.now() - start);
    sizes.push((await Promise.all(scripts)).reduce((a, b) => a + b, 0) / 1024);
    await context.close();
  }
  report('sign-in page initial JS (gzip)', median(sizes), 'KB', 200);
  report('sign-in page loaded and interactive', median(times), 'ms', 1000);

  // 3: an organisation with 10,000 users; its admin signs in (no MFA policy) and opens Users from the menu.
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id, 'Big Customer');
  const password = 'Bench console password 2026';
  const adminUser = await createUser(t, { email: 'admin@big-customer.example', password });
  await addOrgMember(t, { orgId: org.id, userId: adminUser.id, roleId: ORG_ADMIN_ROLE_ID });
  for (let i = 0; i < 10_000; i += 1000) {
    const rows = await t.deps.db
      .insert(users)
      .values(
        Array.from({ length: 1000 }, (_, j) => ({
          email: `user${String(i + j).padStart(5, '0')}@big-customer.example`,
          name: `User ${i + j}`,
          status: 'active' as const,
        })),
      )
      .returning({ id: users.id });
    await t.deps.db
      .insert(organizationUsers)
      .values(rows.map((r) => ({ orgId: org.id, userId: r.id, roleId: ORG_ADMIN_ROLE_ID })));
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${t.baseUrl}/login`);
  await page.getByLabel('E-mail').fill(adminUser.email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('whoami').waitFor();
  const listTimes: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    // A fresh page (empty query cache; the session comes back through the refresh cookie), then the menu link.
    await page.goto(`${t.baseUrl}/account`);
    await page.getByRole('heading', { name: 'My account' }).waitFor();
    const start = performance.now();
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByTestId('users-table').locator('tbody tr').nth(49).waitFor();
    listTimes.push(performance.now() - start);
  }
  report('users page (10,000 users) first page shown', median(listTimes), 'ms', 300);
  await context.close();
} finally {
  await browser.close();
  await t.close();
}
process.exit(failed ? 1 : 0);
