// The authorization flow's pages in real Chromium (/usr/bin/chromium, driven by playwright-core),
// attacked from a page of another site: framed (clickjacking) and posted to (CSRF). Headers alone
// are asserted in test/authorize/attack-requests.test.ts; here the browser shows they work.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { closeServer, listenOn, startAuthServer, within, type AuthServer, type TestGateway } from '../helpers.ts';
import { flowApp, pkce, REDIRECT_URI, startFlowGateway } from '../authorize/flow.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
if (missing) process.stderr.write(`\n!!! BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM} !!!\n\n`);

describe('the authorization pages in Chromium, attacked by another site', { skip: missing }, () => {
  let auth: AuthServer;
  let gw: TestGateway & { issuer: string };
  let app: { key: string; secret: string; id: string };
  let browser: Browser;
  let attacker: Server;
  /** The attacker's site: http://localhost:<port>, another site than the gateway's 127.0.0.1. */
  let attackerUrl: string;
  /** The page the attacker's site serves next. */
  let attackerPage = '';
  before(async () => {
    auth = await startAuthServer({ alice: { password: 'wonderland', sub: 'user-1' } });
    gw = await startFlowGateway({ authServerUrl: auth.url });
    app = await flowApp(gw);
    attacker = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(attackerPage));
    attackerUrl = (await listenOn(attacker)).replace('127.0.0.1', 'localhost');
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  after(async () => {
    await browser?.close();
    if (attacker !== undefined) await closeServer(attacker);
    await gw?.close();
    await auth?.close();
  });

  const authorizeUrl = () =>
    `${gw.url}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.key, redirect_uri: REDIRECT_URI, code_challenge: pkce().challenge, code_challenge_method: 'S256', scope: 'profile', state: 's' })}`;

  test('framed by another site, neither the login page nor the consent page loads', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorizeUrl());
    const loginUrl = page.url();
    assert.match(loginUrl, /\/oauth2\/login\?tx=/);
    await page.fill('input[name=username]', 'alice');
    await page.fill('input[name=password]', 'wonderland');
    await Promise.all([page.waitForURL(/\/oauth2\/consent\?tx=/), page.click('button[type=submit]')]);
    const consentUrl = page.url();
    const messages: string[] = [];
    page.on('console', (m) => messages.push(m.text()));
    for (const framed of [loginUrl, consentUrl]) {
      attackerPage = `<!doctype html><title>Win a prize</title><p>Click the button!</p><iframe src="${framed}" width="600" height="400" style="opacity:0"></iframe>`;
      await page.goto(attackerUrl);
      const frame = page.frames().find((f) => f !== page.mainFrame())!;
      // The frame's refusal may settle after the page's own load: wait for it, within a bound.
      const url = await within(
        10_000,
        async () => frame.url(),
        (u) => u === 'chrome-error://chromewebdata/',
      );
      assert.equal(url, 'chrome-error://chromewebdata/', framed);
    }
    const refusals = () => messages.filter((m) => m.includes(`violates the following Content Security Policy directive: "frame-ancestors 'none'"`)).length;
    assert.equal(
      await within(
        10_000,
        async () => refusals(),
        (n) => n === 2,
      ),
      2,
      messages.join('\n'),
    );
    await context.close();
  });

  test('a form of another site posted to the login page, even with its CSRF token, signs nobody in', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorizeUrl());
    const loginUrl = page.url();
    // The worst case: the attacker knows the page's CSRF token.
    const csrf = await page.inputValue('input[name=csrf]');
    const calls = auth.calls.length;
    const forged = `<!doctype html><body onload="document.forms[0].submit()"><form method="post" action="${loginUrl}"><input name="csrf" value="${csrf}"><input name="username" value="alice"><input name="password" value="wonderland"></form>`;
    // Another site: SameSite=Lax keeps the transaction cookie home. Same site, another origin
    // (another port of 127.0.0.1): the cookie goes along, and the Origin header gives it away.
    for (const [origin, status, message] of [
      [attackerUrl, 400, 'This sign-in has expired'],
      [attackerUrl.replace('localhost', '127.0.0.1'), 403, 'This form was sent from another site.'],
    ] as const) {
      attackerPage = forged;
      const answer = page.waitForResponse((r) => r.url() === loginUrl && r.request().method() === 'POST');
      await page.goto(origin);
      assert.equal((await answer).status(), status, origin);
      await page.waitForLoadState('load');
      assert.ok((await page.textContent('main'))!.includes(message), origin);
    }
    assert.equal(auth.calls.length, calls, 'no password was checked');
    await page.goto(loginUrl);
    await page.fill('input[name=username]', 'alice');
    await page.fill('input[name=password]', 'wonderland');
    await Promise.all([page.waitForURL(/\/oauth2\/consent\?tx=/), page.click('button[type=submit]')]);
    await context.close();
  });
});
