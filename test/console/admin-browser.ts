import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { PACKAGE_ROOT } from '../../src/package-root.ts';

/**
 * Browser helpers of the administrator console suite: Chromium's flags here (ENVIRONMENT.md), axe-core,
 * sign-in and screenshots.
 */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function consoleBuilt(): void {
  const index = path.join(PACKAGE_ROOT, 'console', 'dist', 'index.html');
  if (!fs.existsSync(index)) throw new Error(`The console is not built (${index} missing): run npm run build:console`);
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core on the page as it is: no serious or critical violation. */
export async function assertNoSeriousAxeViolation(page: Page, what: string): Promise<void> {
  await page.evaluate(`${axeSource}\n;0`);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as { violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> };
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`), `axe-core on ${what}`).to.deep.equal([]);
}

/** A page that records CSP refusals and uncaught errors into `problems`. */
export async function pageWithProblems(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return { page, problems };
}

/** Signs in on the sign-in page the console shows at `url`, and waits for the page behind it. */
export async function signInAt(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** A full-page screenshot into $CONSOLE_SCREENSHOTS (docs/screenshots for the README), when set. */
export async function screenshotTo(page: Page, name: string): Promise<void> {
  const folder = process.env['CONSOLE_SCREENSHOTS'];
  if (!folder) return;
  const dir = path.resolve(PACKAGE_ROOT, folder);
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}
