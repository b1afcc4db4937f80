// What a page of the portal must look like to a new user, checked in Chromium at desktop and at
// phone width: nothing wider than the screen, nothing running past the box (card, table row,
// code block) it is drawn in, no word broken inside (a word's characters on one line), and no
// answer of the portal a 404 (the favicon). Each check saves the page as a screenshot for a
// person to look at. No `.test` suffix: the runner must not run it on its own.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;
export const WIDTHS = [DESKTOP, PHONE] as const;

/**
 * Where the screenshots go: <tmpdir>/gateway-portal-screenshots, for a person to open after the
 * run; with PORTAL_SCREENSHOTS=docs, the repository's docs/portal/screenshots/, which docs/portal.md
 * shows. A test run leaves the repository's files as they were.
 */
export const SHOTS = process.env.PORTAL_SCREENSHOTS === 'docs' ? path.join(import.meta.dirname, '..', '..', 'docs', 'portal', 'screenshots') : path.join(tmpdir(), 'gateway-portal-screenshots');

/**
 * Tokens (keys, secrets, thumbprints): one long word with nowhere sensible to break, so they have
 * boxes of their own that wrap them anywhere or scroll them (portal.css), and the word check leaves them out.
 */
const TOKENS = '.token, td[data-label="Key"] code, table.certificates td[data-label="Thumbprint"] code';

// What the checks read of the page, declared here: the tests are compiled without the DOM's types
// (tsconfig.json: lib ES2024), and the functions below run in Chromium, through page.evaluate.
interface Rect {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
  height: number;
}
interface PageElement {
  tagName: string;
  id: string;
  className: unknown;
  textContent: string | null;
  parentElement: PageElement | null;
  getBoundingClientRect(): Rect;
  closest(selector: string): PageElement | null;
  /** SVG elements only: how they are scaled on the screen. */
  getScreenCTM?: () => { a: number; d: number } | null;
}
interface PageText {
  data: string;
  parentElement: PageElement | null;
}
interface PageGlobals {
  innerWidth: number;
  document: {
    scrollingElement: { scrollWidth: number; clientWidth: number };
    body: PageElement;
    querySelectorAll(selector: string): ArrayLike<PageElement>;
    createTreeWalker(root: PageElement, whatToShow: number): { nextNode(): PageText | null };
    createRange(): { setStart(node: PageText, offset: number): void; setEnd(node: PageText, offset: number): void; getClientRects(): ArrayLike<Rect> };
  };
  getComputedStyle(element: PageElement): { overflowX: string; borderLeftWidth: string; borderRightWidth: string; clipPath: string; fontSize: string };
}

/** What is wrong with the page's layout at the viewport's width, in words: each list empty when all is well. */
interface Problems {
  overflow: string[];
  outside: string[];
  broken: string[];
}

/** Runs in the page. */
function layoutProblems(tokens: string): Problems {
  const { document, getComputedStyle, innerWidth } = globalThis as unknown as PageGlobals;
  const name = (e: PageElement) =>
    `<${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${typeof e.className === 'string' && e.className.trim() !== '' ? `.${e.className.trim().split(/\s+/).join('.')}` : ''}>`;
  const px = (n: number) => Math.round(n * 10) / 10;
  // Visually hidden (clip-path), such as a table's header row reflowed into cards: not drawn, not checked.
  const unseen = (e: PageElement) => {
    for (let a: PageElement | null = e; a !== null; a = a.parentElement) if (getComputedStyle(a).clipPath !== 'none') return true;
    return false;
  };
  const problems: Problems = { overflow: [], outside: [], broken: [] };
  const root = document.scrollingElement;
  if (root.scrollWidth > root.clientWidth) problems.overflow.push(`the page is ${root.scrollWidth}px wide in a ${root.clientWidth}px viewport`);
  for (const e of Array.from(document.querySelectorAll('body *'))) {
    const r = e.getBoundingClientRect();
    if ((r.width === 0 && r.height === 0) || unseen(e)) continue;
    // Up to the first ancestor that scrolls or clips sideways (not the page's own: a page cut off is still too wide), checking the first box with borders on both sides that it is drawn in.
    let clipped = false;
    let boxed = false;
    for (let a = e.parentElement; a !== null && a.tagName !== 'BODY'; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX !== 'visible') {
        clipped = true;
        break;
      }
      if (!boxed && Number.parseFloat(style.borderLeftWidth) > 0 && Number.parseFloat(style.borderRightWidth) > 0) {
        boxed = true;
        const box = a.getBoundingClientRect();
        if (r.right > box.right + 1 || r.left < box.left - 1) {
          problems.outside.push(`${name(e)} "${(e.textContent ?? '').trim().slice(0, 40)}" (${px(r.left)}–${px(r.right)}) runs past ${name(a)} (${px(box.left)}–${px(box.right)})`);
        }
      }
    }
    if (!clipped && r.right > innerWidth + 0.5) problems.overflow.push(`${name(e)} "${(e.textContent ?? '').trim().slice(0, 40)}" ends at ${px(r.right)}px`);
  }
  // A word: letters, digits, _ and apostrophes; a number with its separators (1,000,000). A break
  // where the text itself allows one (a space, after a slash or a hyphen) is not inside a word.
  const words = /\p{N}+(?:[.,]\p{N}+)+|[\p{L}\p{N}_'’]+/gu;
  const walker = document.createTreeWalker(document.body, 4 /* NodeFilter.SHOW_TEXT */);
  const range = document.createRange();
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent === null || parent.closest(`script, style, title, textarea, select, svg, ${tokens}`) !== null || unseen(parent)) continue;
    for (const m of node.data.matchAll(words)) {
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const rects = Array.from(range.getClientRects()).filter((b) => b.width > 0);
      const first = rects[0];
      // A later fragment that starts below the first one's bottom is on another line.
      if (first !== undefined && rects.some((b) => b.top >= first.bottom - 1)) {
        problems.broken.push(`"${m[0]}" in ${name(parent)}: "${node.data.trim().slice(0, 80)}"`);
      }
    }
  }
  return problems;
}

/** Runs in the page: the size each label of the usage chart is drawn at, in CSS pixels (an SVG's scale included). */
function chartLabelSizes(): number[] {
  const { document, getComputedStyle } = globalThis as unknown as PageGlobals;
  return Array.from(document.querySelectorAll('.chart .label')).map((e) => Number.parseFloat(getComputedStyle(e).fontSize) * (e.getScreenCTM?.()?.d ?? 1));
}

/**
 * Runs `probe` in the page. tsx compiles with esbuild's keepNames, which wraps functions defined
 * inside it in a __name() helper that the page does not have: the page gets one that does nothing.
 */
export async function inPage<A, R>(page: Page, probe: (arg: A) => R, arg: A): Promise<R> {
  return page.evaluate<R>(`(() => { const __name = (f) => f; return (${probe.toString()})(${JSON.stringify(arg)}); })()`);
}

/** The portal's answers to this page that were errors (a 404 for a favicon), from now on. */
export function failedAnswers(page: Page, origin: string): string[] {
  const failed: string[] = [];
  page.on('response', (res) => {
    if (res.url().startsWith(origin) && res.status() >= 400) failed.push(`${res.status()} ${res.request().method()} ${res.url()}`);
  });
  return failed;
}

/**
 * At 1280 and at 390 px: checks the layout (no sideways scrolling, nothing past the screen's edge
 * or its box, no word broken inside), the chart's labels if any (at least 11 px), the icon the
 * page names (served, 200), and that none of the portal's answers failed; saves a full-page
 * screenshot of each width as docs/portal/screenshots/<name>-<width>.png (of `options.shot`
 * alone, when the part to see is in a long page). `options.atWidth` checks more at each width,
 * before the screenshot. The viewport is put back as it was.
 */
export async function checkLayout(page: Page, name: string, failed: readonly string[], options: { atWidth?: (width: number) => Promise<void>; shot?: Locator } = {}): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const viewport = page.viewportSize();
  const icon = await page.locator('link[rel=icon]').getAttribute('href');
  assert.ok(icon !== null, `${name}: the page names its icon`);
  const answer = await page.request.get(new URL(icon, page.url()).href);
  assert.equal(answer.status(), 200, `${name}: the icon is served`);
  assert.equal(answer.headers()['content-type'], 'image/svg+xml');
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    const problems = await inPage(page, layoutProblems, TOKENS);
    const at = `${name} at ${size.width}px`;
    assert.deepEqual(problems.overflow, [], `${at}: nothing wider than the screen`);
    assert.deepEqual(problems.outside, [], `${at}: nothing runs past its box`);
    assert.deepEqual(problems.broken, [], `${at}: no word broken inside`);
    for (const px of await inPage(page, chartLabelSizes, null)) assert.ok(px >= 11, `${at}: a chart label is ${px}px, at least 11`);
    await options.atWidth?.(size.width);
    const file = path.join(SHOTS, `${name}-${size.width}.png`);
    await (options.shot === undefined ? page.screenshot({ path: file, fullPage: true }) : options.shot.screenshot({ path: file }));
  }
  assert.deepEqual(failed, [], `${name}: every answer of the portal succeeded`);
  if (viewport !== null) await page.setViewportSize(viewport);
}
