// Browser-side helpers for the console tests: a browser context given a session minted by the real session service
// (the refresh cookie and a CSRF pair, as a sign-in leaves them), TOTP codes on the test clock, and the waits the
// pages share. Sign-in itself is a journey of its own (test/console/signin.test.ts, journeys.test.ts).
import { randomBytes } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { totpFor } from '../../src/modules/mfa/codes.js';
import type { TestApp } from './app.js';
import type { SignedIn } from './fixtures.js';

/** Puts the session's refresh cookie (HttpOnly, /api/v1/auth) and a CSRF cookie in the context; a page load restores it. */
export async function giveSession(
  context: BrowserContext,
  t: Pick<TestApp, 'baseUrl'>,
  session: Pick<SignedIn, 'refreshToken'>,
) {
  const domain = new URL(t.baseUrl).hostname;
  await context.addCookies([
    {
      name: 'service_refresh_token',
      value: session.refreshToken,
      domain,
      path: '/api/v1/auth',
      httpOnly: true,
      sameSite: 'Lax',
      secure: false,
    },
    {
      name: 'service_csrf_token',
      value: randomBytes(24).toString('base64url'),
      domain,
      path: '/',
      httpOnly: false,
      sameSite: 'Lax',
      secure: false,
    },
  ]);
}

/** A TOTP code of a later time step than the last one used (the service accepts a step once). */
export function nextTotp(t: TestApp, secret: string) {
  t.clock.advance(30_000);
  return totpFor(secret).generate({ timestamp: t.clock.now().getTime() });
}

/** Types a code into a Mantine PinInput (the first box takes focus, the rest follow). */
export async function typeCode(page: Page, code: string, scope: Page | ReturnType<Page['locator']> = page) {
  await scope.locator('.mantine-PinInput-input').first().click();
  await page.keyboard.type(code);
}

/** The signed-in frame shows this e-mail. */
export async function whoami(page: Page, email: string) {
  await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 60_000 }).toBe(email);
}

/** Waits until no finite CSS transition or animation runs (a dialog fading in would fail axe's contrast check). */
export async function settled(page: Page) {
  // Endless ones (a loading spinner) never settle and are left out.
  await page.waitForFunction(
    () =>
      document
        .getAnimations()
        .every((a) => a.playState !== 'running' || a.effect?.getComputedTiming().endTime === Infinity),
    undefined,
    { timeout: 10_000 },
  );
}

export async function dialog(page: Page, title: string | RegExp) {
  const d = page.getByRole('dialog', { name: title });
  await d.waitFor();
  await settled(page);
  return d;
}

/** A Mantine Select or MultiSelect: open it by its label and pick the option (a MultiSelect's box covers its input). */
export async function choose(
  page: Page,
  scope: Page | ReturnType<Page['locator']>,
  label: string | RegExp,
  option: string | RegExp,
) {
  await scope
    .getByRole('combobox', { name: label })
    .or(scope.getByRole('textbox', { name: label }))
    .first()
    .click({ force: true });
  await page.getByRole('option', { name: option }).click();
}

/** Signs in with e-mail and password on /login (the second step, if any, is the caller's). */
export async function passwordStep(page: Page, t: TestApp, email: string, password: string) {
  await page.goto(`${t.baseUrl}/login`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}
