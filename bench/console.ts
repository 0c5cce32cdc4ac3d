// The console's budgets, measured in Debian's Chromium against the built server (`npm start`'s command line, its
// console from web/dist; test/dist/launch.ts: a fresh DATA_DIR or, with DATABASE_URL / BENCH_DATABASE_URL, a fresh
// PostgreSQL database), each beside a floor measured the same way in the same run:
//  - initial JavaScript of the sign-in page ≤ 200 KB gzip (every script the page loads until the form is usable);
//  - sign-in page loaded and interactive ≤ 1 s (navigation → the "Sign in" button visible and enabled), cold cache;
//    floor: a cold navigation to the same server's /healthz (the browser and the socket, no console);
//  - the users page with 10,000 users lists its first page ≤ 300 ms after navigation (in-app link click → rows shown);
//    floor: the page's own API call (GET /api/v1/users?limit=50) timed from this process.
// The first administrator is made over HTTP (setup link, TOTP) and signs in in the browser with password and TOTP;
// the 10,000 partner technicians are written into the server's database (harness.ts seedDatabase). Median of 5 runs
// each. Exits 1 when a budget is missed.
//   npx tsx bench/console.ts [--db=pglite,postgres]
import { sql } from 'drizzle-orm';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureBuilt } from '../scripts/built-server.js';
import { partnerUsers, users } from '../src/db/schema/index.js';
import { firstAdmin, PARTNER_TECHNICIAN_ROLE_ID, totp } from '../test/dist/flows.js';
import { startBuiltServer } from '../test/dist/launch.js';
import { databases, seedDatabase } from './harness.js';

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

let failed = false;
const report = (name: string, value: number, unit: string, budget: number, floor: number) => {
  const ok = value <= budget;
  if (!ok) failed = true;
  console.log(
    `${name.padEnd(44)} ${value.toFixed(1).padStart(8)} ${unit.padEnd(3)} budget ${budget} ${unit}  ${ok ? 'ok' : 'OVER'}   (floor in the same run ${floor.toFixed(1)} ${unit})`,
  );
};

/** Median time of a cold navigation (new context, empty cache) to `url` until `ready` resolves, and JS loaded (KB gzip). */
async function coldLoads(browser: Browser, url: string, ready: (page: Page) => Promise<unknown>) {
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
    await page.goto(url);
    await ready(page);
    times.push(performance.now() - start);
    sizes.push((await Promise.all(scripts)).reduce((a, b) => a + b, 0) / 1024);
    await context.close();
  }
  return { time: median(times), kb: median(sizes) };
}

async function measure(browser: Browser, name: string, env: NodeJS.ProcessEnv) {
  const server = await startBuiltServer(
    { RATE_LIMIT_API: '100000000/60' },
    { databaseUrl: env.DATABASE_URL, redisUrl: env.REDIS_URL },
  );
  try {
    console.log(`\n## Console budgets (${name}, Chromium headless, median of ${RUNS})`);
    // 1 and 2: the sign-in page, cold (a new context per run: empty cache); the floor: /healthz the same way.
    const floor = await coldLoads(browser, `${server.baseUrl}/healthz`, (page) => page.locator('body').waitFor());
    const signIn = await coldLoads(browser, `${server.baseUrl}/login`, async (page) => {
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor({ state: 'visible' });
      await page.waitForFunction(() =>
        [...document.querySelectorAll('button')].some((b) => b.textContent === 'Sign in' && !b.disabled),
      );
    });
    report('sign-in page initial JS (gzip)', signIn.kb, 'KB', 200, floor.kb);
    report('sign-in page loaded and interactive', signIn.time, 'ms', 1000, floor.time);

    // 3: the partner with 10,000 technicians; its administrator signs in (password, TOTP) and opens Users.
    const admin = await firstAdmin(server);
    await seedDatabase(server, async (db) => {
      for (let i = 0; i < 10_000; i += 1000) {
        const rows = await db
          .insert(users)
          .values(
            Array.from({ length: 1000 }, (_, j) => ({
              email: `user${String(i + j).padStart(5, '0')}@big-msp.example`,
              name: `User ${i + j}`,
              status: 'active' as const,
            })),
          )
          .returning({ id: users.id });
        await db.insert(partnerUsers).values(
          rows.map((r) => ({
            partnerId: admin.partnerId,
            userId: r.id,
            roleId: PARTNER_TECHNICIAN_ROLE_ID,
            orgAccess: 'all' as const,
            orgIds: [],
          })),
        );
      }
      await db.execute(sql`analyze`);
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}/login`);
    await page.getByLabel('E-mail').fill(admin.email);
    await page.getByLabel(/^Password/).fill(admin.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('.mantine-PinInput-input').first().click();
    await page.keyboard.type(totp(admin.secret, 30_000)); // the next time step: enrolment used the current one
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByTestId('whoami').waitFor();
    const listTimes: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      // A fresh page (empty query cache; the session comes back through the refresh cookie), then the menu link.
      await page.goto(`${server.baseUrl}/account`);
      await page.getByRole('heading', { name: 'My account' }).waitFor();
      const start = performance.now();
      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByTestId('users-table').locator('tbody tr').nth(49).waitFor();
      listTimes.push(performance.now() - start);
    }
    // The floor: the same first page from the API with the administrator's token, from this process.
    const apiTimes: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      const start = performance.now();
      const res = await admin.api.raw.get('/users?limit=50');
      if (res.status !== 200 || res.body.data.length !== 50) throw new Error(`GET /users answered ${res.status}`);
      if (i >= 2) apiTimes.push(performance.now() - start);
    }
    report('users page (10,000 users) first page shown', median(listTimes), 'ms', 300, median(apiTimes));
    await context.close();
  } finally {
    await server.close();
  }
}

ensureBuilt();
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: FLAGS,
});
try {
  for (const { name, env } of databases()) await measure(browser, name, env);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
