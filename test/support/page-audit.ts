import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';

const axeSource: string = createRequire(import.meta.url)('axe-core').source;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core's audit of the page as it is now (WCAG 2.x A and AA rules and best practices): the serious and critical findings. */
export async function seriousAccessibilityViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated by the browser's debugger protocol, so the page's own Content-Security-Policy (no inline script) stays on.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations as {
      id: string;
      impact: string | null;
      help: string;
      nodes: { target: string[] }[];
    }[];
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

export interface FirstLoad {
  /** Bytes over the wire (headers and bodies) for the document and every request until the page was interactive. */
  bytes: number;
  requests: number;
  /** From navigation start: the document parsed (DOMContentLoaded), and the page's script marked it interactive. */
  domContentLoadedMs: number;
  interactiveMs: number;
}

/**
 * One page's first load as a first-time visitor's browser does it: a fresh context (empty HTTP cache) carrying the
 * buyer's storage (their sign-in), measured by the browser's own performance timeline. Interactive is the page
 * script's `onsale:interactive` mark: its first real content drawn (the place in the queue, the seat map, the order).
 */
export async function measureFirstLoad(
  browser: Browser,
  storageState: Awaited<ReturnType<BrowserContext['storageState']>>,
  url: string,
): Promise<FirstLoad> {
  const context = await browser.newContext({ storageState });
  try {
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.interactive === 'true', null, { timeout: 30_000 });
    return await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      const resources = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
      const interactive =
        performance.getEntriesByName('onsale:interactive')[0]?.startTime ?? nav.domContentLoadedEventEnd;
      const before = resources.filter((r) => r.startTime <= interactive);
      return {
        bytes: nav.transferSize + before.reduce((n, r) => n + r.transferSize, 0),
        requests: 1 + before.length,
        domContentLoadedMs: Math.round(nav.domContentLoadedEventEnd),
        interactiveMs: Math.round(interactive),
      };
    });
  } finally {
    await context.close();
  }
}
