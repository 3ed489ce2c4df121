import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import { errors, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import type { AdminFixture } from '../admin/support.ts';

/** The flags Debian's Chromium runs headless with here (ENVIRONMENT.md). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The built console: the tests run against what `npm install` builds. */
export function requireConsoleBuild(): void {
  const index = path.join(PACKAGE_ROOT, 'console', 'dist', 'index.html');
  if (!fs.existsSync(index)) throw new Error(`The console is not built (${index} missing): run npm run build:console`);
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The rules axe need not run, computed in the page from axe's own metadata: those whose impact is set on the rule
 * (which then is the impact of every violation it reports) and is below serious. Only serious and critical
 * violations fail the check, so leaving them out changes no outcome; it makes a run about a third shorter.
 */
const RULES_BELOW_SERIOUS = `Object.fromEntries(axe._audit.rules.filter((r) => r.impact === 'minor' || r.impact === 'moderate').map((r) => [r.id, { enabled: false }]))`;

/**
 * axe-core on the page as it is: no serious or critical violation. axe is evaluated through the DevTools
 * protocol, which the page's CSP does not govern, so the CSP stays in force for the console's own scripts.
 * axe runs in the page's own document only (iframes: false): it is not evaluated in any frame (a video preview is
 * another site's), where it would only wait half a second per frame for an answer that cannot come.
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  // axe-core's source is ~0.5 MB: evaluated once per document, not at every check of the same page.
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(`${axeSource}\n;0`);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'], iframes: false, rules: ${RULES_BELOW_SERIOUS} })`)) as {
    violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>;
  };
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    bad.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`),
    `axe-core on ${what}`,
  ).to.deep.equal([]);
}

/** A page that records CSP refusals and uncaught errors; `problems` must stay empty. */
export async function watchedPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return { page, problems };
}

/**
 * Opens `url` signed in as `email`: through the sign-in page when it shows, or at once when the browser context
 * already holds a session cookie (a reload, another tab).
 */
export async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(url);
  const form = page.getByLabel('E-mail');
  const signedIn = page.getByRole('navigation', { name: 'Main' });
  await form.or(signedIn).first().waitFor();
  if (await form.isVisible()) {
    await form.fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await signedIn.waitFor();
}

/** The pause in typing after which the editor keeps what was typed (AUTOSAVE_DELAY_MS in console/src/pages/entry-editor.tsx). */
export const AUTOSAVE_PAUSE_MS = 1500;

/**
 * Moves the page's clock on by `stepMs` at a time until `what` shows: a timer of the console's own (the autosave
 * once typing pauses, AUTOSAVE_DELAY_MS in console/src/pages/entry-editor.tsx; a poll; a retry's back-off) fires
 * at once instead of after its real delay. The context's clock must have been installed (`context.clock.install()`)
 * before its pages loaded. Time still flows between steps, so a step made before the timer was set is made up by
 * the next one.
 */
export async function fastForwardUntil(page: Page, stepMs: number, what: Locator, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await page.clock.fastForward(stepMs);
    try {
      await what.waitFor({ timeout: 250 });
      return;
    } catch (error) {
      if (!(error instanceof errors.TimeoutError) || Date.now() >= deadline) throw error;
    }
  }
}

/** A small PNG drawn with sharp, written to a temp file for a file input. */
export async function pngFile(dir: string, name: string, colour: { r: number; g: number; b: number }): Promise<string> {
  const file = path.join(dir, name);
  await sharp({ create: { width: 64, height: 48, channels: 3, background: colour } }).png().toFile(file);
  return file;
}

/**
 * Screenshots of the main pages, taken when CONSOLE_SCREENSHOTS names a folder (those docs/console.md shows are made with
 * CONSOLE_SCREENSHOTS=docs/screenshots), so that an ordinary test run changes no file of the repository.
 * The whole page is taken in a viewport as tall as the page, then the viewport is put back: a full-page capture
 * of the ordinary viewport leaves a sticky element (the editor's Save bar) where the viewport ended, over the
 * fields, which no reader of the page ever sees.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const folder = process.env['CONSOLE_SCREENSHOTS'];
  if (!folder) return;
  const dir = path.resolve(PACKAGE_ROOT, folder);
  fs.mkdirSync(dir, { recursive: true });
  const viewport = page.viewportSize();
  if (!viewport) throw new Error('screenshot: the page has no fixed viewport');
  const height = (await page.evaluate('document.documentElement.scrollHeight')) as number;
  await page.setViewportSize({ width: viewport.width, height: Math.max(viewport.height, height) });
  try {
    await page.screenshot({ path: path.join(dir, `${name}.png`) });
  } finally {
    await page.setViewportSize(viewport);
  }
}

/** POST/GET with a console session (bearer token and X-Project-Id). */
export function sessionCall(f: AdminFixture, token: string) {
  return (method: string, route: string, body?: unknown) => f.call(method, route, { token, headers: { 'X-Project-Id': f.project.projectId }, ...(body === undefined ? {} : { body }) });
}

export type { Browser };
