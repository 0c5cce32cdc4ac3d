// Browser harness for the console tests: the built console (rebuilt when web/ changed), Debian's Chromium driven
// by playwright-core (nothing downloaded), axe-core injected into pages, CSP violations collected, screenshots.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect, vi } from 'vitest';
import { giveSession } from '../support/console-session.js';

// A browser journey is several page loads on a shared 2-core machine: give it time (speed is in bench/console.ts).
vi.setConfig({ testTimeout: 180_000 });

const repo = fileURLToPath(new URL('../..', import.meta.url));
const dist = join(repo, 'web/dist/index.html');

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

export function consoleIsStale(): boolean {
  if (!existsSync(dist)) return true;
  const sources = Math.max(
    newest(join(repo, 'web/src')),
    newest(join(repo, 'web/public')),
    statSync(join(repo, 'web/index.html')).mtimeMs,
    statSync(join(repo, 'web/vite.config.ts')).mtimeMs,
  );
  return sources > statSync(dist).mtimeMs;
}

/** Builds web/dist when it is missing or older than web/ (once, whatever number of test files ask at once). */
export function ensureConsoleBuilt() {
  if (!consoleIsStale()) return;
  execFileSync(
    'flock',
    ['/tmp/gatehouse-web-build.lock', 'sh', '-c', `npx vite build --config web/vite.config.ts --logLevel warn`],
    { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 },
  );
}

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

export interface Tab {
  context: BrowserContext;
  page: Page;
  /** Console errors and CSP refusals seen so far. */
  problems: string[];
}

export async function newTab(browser: Browser): Promise<Tab> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    const text = m.text();
    if (/Content Security Policy|Refused to/i.test(text)) problems.push(text);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { context, page, problems };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core run in the page (through the DevTools protocol, so the page's CSP does not stop it). */
export async function expectAccessible(page: Page, label: string) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const r = await (
      window as unknown as {
        axe: {
          run: (
            ctx: unknown,
            o: unknown,
          ) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: unknown }[] }[] }>;
        };
      }
    ).axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)),
    }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `axe on ${label}`).toEqual([]);
}

const shotDir = join(repo, 'test/console/screenshots');
/** With SCREENSHOTS=1, a 1280×800 PNG per page under test/console/screenshots/ (git-ignored). */
export async function shot(page: Page, name: string) {
  if (process.env.SCREENSHOTS !== '1') return;
  mkdirSync(shotDir, { recursive: true });
  await page.screenshot({ path: join(shotDir, `${name}.png`) });
}

/** What the README's picture shows that a console change can make stale: title, heading, the main navigation. */
async function shownInScreenshot(page: Page) {
  return {
    title: await page.title(),
    heading: ((await page.locator('h1').first().textContent()) ?? '').trim(),
    navigation: (await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).map((t) =>
      t.trim(),
    ),
  };
}

/**
 * The README's picture of the console (docs/console.png) and, beside it, what it shows (docs/console.json). With
 * UPDATE_SCREENSHOT=1 (`npm run screenshot`) both are written from the page under test; otherwise the page must still
 * show what the picture does, so a console change that adds a page or renames one asks for a new picture. Pixels are
 * not compared: fonts and anti-aliasing differ between machines.
 */
export async function readmeScreenshot(page: Page) {
  const shown = await shownInScreenshot(page);
  const sidecar = join(repo, 'docs/console.json');
  if (process.env.UPDATE_SCREENSHOT === '1') {
    await page.screenshot({ path: join(repo, 'docs/console.png') });
    writeFileSync(sidecar, `${JSON.stringify(shown, null, 2)}\n`);
    return;
  }
  expect(
    shown,
    'docs/console.png no longer shows the console as it is: run `npm run screenshot`, commit docs/console.png and docs/console.json',
  ).toEqual(JSON.parse(readFileSync(sidecar, 'utf8')));
}

/**
 * Waits until no CSS transition runs (a dialog, drawer or menu fading in or out): axe measures the colours of
 * a half-transparent element as they are at that instant. Keyframe animations (loaders) do not count.
 */
export async function settle(page: Page) {
  await page.waitForFunction(() => document.getAnimations().every((a) => !(a instanceof CSSTransition)), null, {
    timeout: 10_000,
  });
}

/** Every visit of a page: wait for it to settle, check accessibility, no CSP refusal, take a screenshot. */
export async function checkPage(tab: Tab, name: string) {
  // Lazy pages: wait until the page's heading is up and no loader is left.
  await tab.page.locator('h1').first().waitFor({ timeout: 60_000 });
  await tab.page.waitForLoadState('networkidle');
  await tab.page
    .locator('[aria-busy="true"]')
    .first()
    .waitFor({ state: 'detached', timeout: 30_000 })
    .catch(() => undefined);
  await settle(tab.page);
  await shot(tab.page, name);
  await expectAccessible(tab.page, name);
  expect(tab.problems, `console problems on ${name}`).toEqual([]);
}

/**
 * Opens the console signed in to a session minted by the real session service (fixtures.ts `sessionFor` and the
 * signed-in member helpers): its refresh cookie and a CSRF cookie, which the console's start-up refresh turns into
 * an in-memory session, as after a reload. The sign-in journeys themselves are in signin.test.ts.
 */
export async function openSignedIn(tab: Tab, baseUrl: string, refreshToken: string, path = '/') {
  await giveSession(tab.context, { baseUrl }, { refreshToken });
  await tab.page.goto(`${baseUrl}${path}`);
}
