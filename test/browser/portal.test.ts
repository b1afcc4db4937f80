// The developer portal in real Chromium (Debian's /usr/bin/chromium, driven by playwright-core):
// sign up, confirm the address with the link mailed to a real SMTP server, log in, register an app, read its key and secret off the page, use them at the token
// endpoint and on a protected route, rotate the secret and see the old one stop after the overlap;
// then an API reference's try-it panel getting a token and calling an operation from the page;
// then client certificates (RFC 8705) pasted on an app's page, listed, rotated and removed.
// Every page visited is saved as a screenshot under test-output/screenshots/, at desktop width
// (…-desktop.png) and at phone width (…-phone-390.png), where it must not scroll sideways.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createApp, createDeveloper, inviteDeveloper, listApps } from '../../src/admin/operations.ts';
import { freePort } from '../../src/http/listener.ts';
import { bearer, call, startTestGateway, startUpstream, tempDir, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';
import { makeCertificates, type Pair } from '../oauth/mtls-certificates.ts';
import { linkIn, startMailbox, type Mailbox } from '../portal/mailbox.ts';
import { writePets } from '../portal/pets.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = path.join(import.meta.dirname, '..', '..', 'test-output', 'screenshots');
const missing = !existsSync(CHROMIUM);
if (missing) {
  process.stderr.write(`\n!!! BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium, as .ci/run does) !!!\n\n`);
}

const PASSWORD = 'a long enough password';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const REVEAL_URL = /\/apps\/[A-Za-z0-9_-]+\/secret$/;
/** What an app's page says client certificates do. */
const EXPLAINED =
  'Once a certificate is registered, the app authenticates at the token endpoint by presenting it (mutual TLS) and sending its key as client_id in the form, with no secret: its secret no longer works. Tokens requested that way are bound to the certificate, and removing every certificate gives the secret back.';

// Both suites save into SHOTS, numbered in the order taken: they are in one file so that they run one after the other.
let shot = 0;
before(() => {
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
});

/** Saves the page at desktop and at phone width, checks it does not scroll sideways on the phone, and puts the viewport back. */
async function screenshot(page: Page, name: string): Promise<void> {
  const viewport = page.viewportSize()!;
  const prefix = path.join(SHOTS, `${String(++shot).padStart(2, '0')}-${name}`);
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: `${prefix}-desktop.png`, fullPage: true });
  await page.setViewportSize(PHONE);
  const [scrollWidth, innerWidth] = await page.evaluate<[number, number]>('[document.documentElement.scrollWidth, window.innerWidth]');
  assert.ok(scrollWidth <= innerWidth, `${name}: no sideways scrolling at ${innerWidth}px (the page is ${scrollWidth}px wide)`);
  await page.screenshot({ path: `${prefix}-phone-390.png`, fullPage: true });
  await page.setViewportSize(viewport);
}

describe('portal in Chromium', { skip: missing }, () => {
  let gw: TestGateway;
  let mailbox: Mailbox;
  let browser: Browser;
  let now = Date.now();
  /** The pair registered in the first test, rotated in the second. */
  let first: { key: string; secret: string } | undefined;

  before(async () => {
    mailbox = await startMailbox();
    gw = await startTestGateway(
      {
        products: `
  public:
    displayName: Greetings API
    description: Hello, answered by the gateway.
    routes: [hello]
    quota: { limit: 1000, interval: day }
    portal: true
`,
        extra: `portal:\n  listen: { port: 0 }\n  keyOverlap: 1h\n  title: Test portal\n  signup: open\n${mailbox.yaml}`,
      },
      { clock: () => now },
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await mailbox?.close();
  });

  /** On the form to register an app, at the page's current width: each radio button sits left of its product's name, on its line. */
  async function assertRadiosBesideNames(page: Page): Promise<void> {
    const choices = page.locator('label.choice');
    assert.ok((await choices.count()) > 0);
    for (const choice of await choices.all()) {
      const radio = (await choice.locator('input[type=radio]').boundingBox())!;
      const name = (await choice.locator('strong').boundingBox())!;
      assert.ok(radio.x + radio.width <= name.x, `the radio (right edge ${radio.x + radio.width}) is left of its name (${name.x})`);
      assert.ok(radio.y < name.y + name.height && name.y < radio.y + radio.height, `the radio (${radio.y}–${radio.y + radio.height}) is on its name's line (${name.y}–${name.y + name.height})`);
    }
  }

  const appsOf = async (email: string) => (await listApps(gw.admin, { developer: email })).map((a) => a.name);

  async function token(app: { key: string; secret: string }): Promise<{ status: number; token: string | undefined }> {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    return { status: res.status, token: (res.body as { access_token?: string }).access_token };
  }

  test('without JavaScript: sign up, confirm the address, log out, log in, register an app, use its key and secret', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const base = gw.gateway.portalUrl!;

    await page.goto(base);
    assert.equal(await page.locator('h1').textContent(), 'API products');
    await screenshot(page, 'products');
    await page.click('text=Greetings API');
    assert.match((await page.locator('#example-token').textContent())!, /grant_type=client_credentials/);
    await screenshot(page, 'product');

    await page.click('header >> text=Sign up');
    await page.fill('input[name=email]', 'ada@example.com');
    await page.fill('input[name=name]', 'Ada <Lovelace>');
    await page.fill('input[name=password]', PASSWORD);
    await screenshot(page, 'signup');
    await page.click('button:has-text("Sign up")');
    assert.equal(await page.locator('h1').textContent(), 'Check your email');
    await screenshot(page, 'check-email');

    // The mailed link names the portal as http://localhost:<port>; this browser stays on one origin.
    const link = linkIn(await mailbox.next('ada@example.com'), base.replace('127.0.0.1', 'localhost'));
    await page.goto(`${base}${link}`);
    assert.equal(await page.locator('h1').textContent(), 'Confirm your email address');
    await page.fill('input[name=email]', 'ada@example.com');
    await page.fill('input[name=password]', PASSWORD);
    await screenshot(page, 'confirm');
    await page.click('button:has-text("Confirm")');
    await page.waitForURL(`${base}/apps?done=verified`);
    assert.equal(await page.locator('h1').textContent(), 'My apps');
    assert.equal(await page.locator('.notice').textContent(), 'Your email address is confirmed: you can register apps.');
    await screenshot(page, 'apps-empty');

    await page.click('button:has-text("Log out")');
    await page.waitForURL(`${base}/`);
    await page.click('header >> text=Log in');
    await page.click('text=Set a new one');
    assert.equal(await page.locator('h1').textContent(), 'Forgot your password');
    await screenshot(page, 'forgot');
    await page.goto(`${base}/reset?token=not-a-real-token`);
    assert.equal(await page.locator('h1').textContent(), 'Set a new password');
    await screenshot(page, 'reset');
    await page.click('header >> text=Log in');
    await page.fill('input[name=email]', 'ada@example.com');
    await page.fill('input[name=password]', PASSWORD);
    await screenshot(page, 'login');
    await page.click('button:has-text("Log in")');
    await page.waitForURL(`${base}/apps`);

    await page.click('text=Register a new app');
    await page.fill('input[name=name]', 'My <first> app');
    await page.check('input[name=product][value=public]');
    await assertRadiosBesideNames(page);
    await page.setViewportSize(PHONE);
    await assertRadiosBesideNames(page);
    await page.setViewportSize(DESKTOP);
    await screenshot(page, 'register');
    await page.click('button:has-text("Register app")');
    await page.waitForURL(REVEAL_URL);
    const revealUrl = page.url();
    assert.equal(await page.locator('h1').textContent(), 'App My <first> app registered');
    assert.match((await page.locator('.warning').textContent())!, /it will not be shown again/);
    assert.equal(await page.locator('button.copy').first().isVisible(), false, 'no copy button without JavaScript');
    const key = (await page.locator('#app-key').textContent())!;
    const secret = (await page.locator('#app-secret').textContent())!;
    first = { key, secret };
    await screenshot(page, 'secret');

    // Post/Redirect/Get: a reload GETs the reveal page again, which no longer has the secret, and registers nothing.
    await page.reload();
    assert.equal(page.url(), revealUrl);
    assert.equal(await page.locator('h1').textContent(), 'Secret no longer available');
    assert.match((await page.locator('main').textContent())!, /This secret was shown once and is no longer available/);
    assert.equal(await page.locator('#app-secret').count(), 0);
    assert.ok(!(await page.content()).includes(secret), 'the secret is nowhere on the page');
    assert.deepEqual(await appsOf('ada@example.com'), ['My <first> app'], 'exactly one app');
    await screenshot(page, 'secret-gone');

    const issued = await token({ key, secret });
    assert.equal(issued.status, 200);
    const answer = await call(`${gw.url}/v1/hello`, { headers: bearer(issued.token!) });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { message: 'hello' });

    await page.click('text=Go to the app');
    assert.equal(await page.locator('h1').textContent(), 'My <first> app');
    assert.equal(await page.locator(`td code:text-is("${key}")`).count(), 1);
    assert.equal(await page.locator('#usage-24h').textContent(), 'In the last 24 hours: 1 call, 0.0\u00a0% of them answered 4xx or 5xx.', "this hour's call is counted");
    await screenshot(page, 'app');
    await page.click('text=Delete this app');
    assert.equal(await page.locator('h1').textContent(), 'Delete My <first> app?');
    await screenshot(page, 'delete');
    await page.click('text=Cancel');
    await page.click('header >> text=My apps');
    await screenshot(page, 'apps');
    await page.click('header >> text=Account');
    assert.equal(await page.locator('h1').textContent(), 'Account');
    await screenshot(page, 'account');
    await page.goto(`${base}/apps/nothing-here`);
    await screenshot(page, 'not-found');
    await context.close();
  });

  test('at phone width, with JavaScript: rotate the secret, copy it; the old pair stops after the overlap', async () => {
    const context = await browser.newContext({ viewport: PHONE });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const page = await context.newPage();
    const base = gw.gateway.portalUrl!;
    await page.goto(`${base}/login`);
    await page.fill('input[name=email]', 'ada@example.com');
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button:has-text("Log in")');
    await page.waitForURL(`${base}/apps`);
    const width = await page.evaluate<number>('document.documentElement.scrollWidth');
    assert.ok(width <= 390, `no sideways scrolling at phone width (${width}px)`);
    await screenshot(page, 'apps-logged-in');

    assert.ok(first, 'the first test registered an app');
    const oldKey = first.key;
    assert.equal((await page.locator('td code').first().textContent())!, oldKey);
    await page.click('text=My <first> app');
    await screenshot(page, 'app-before-rotation');
    await page.click('button:has-text("Rotate secret")');
    await page.waitForURL(REVEAL_URL);
    const revealUrl = page.url();
    assert.match((await page.locator('h1').textContent())!, /New key and secret/);
    assert.match((await page.locator('main').textContent())!, /The previous key and secret keep working until/);
    const key = (await page.locator('#app-key').textContent())!;
    const secret = (await page.locator('#app-secret').textContent())!;
    assert.notEqual(key, oldKey);
    const copy = page.locator('button.copy[data-copy=app-secret]');
    assert.equal(await copy.isVisible(), true);
    await copy.click();
    // A locator's wait, not waitForFunction: the portal's CSP (no 'unsafe-eval') refuses the string predicate it evaluates.
    await copy.filter({ hasText: /^Copied$/ }).waitFor();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret);
    await screenshot(page, 'rotated');

    await page.reload();
    assert.equal(page.url(), revealUrl);
    assert.equal(await page.locator('h1').textContent(), 'Secret no longer available');
    assert.equal(await page.locator('#app-secret').count(), 0);
    assert.ok(!(await page.content()).includes(secret), 'the secret is nowhere on the page');
    const [app] = await listApps(gw.admin, { developer: 'ada@example.com' });
    assert.deepEqual(app!.credentials.map((c) => c.key).sort(), [oldKey, key].sort(), 'exactly one rotation');
    await screenshot(page, 'rotated-gone');

    assert.equal((await token({ key, secret })).status, 200, 'the new pair works');
    const during = await token(first);
    assert.equal(during.status, 200, 'the old pair works through the overlap');
    now += 60 * 60_000;
    const old = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, first);
    assert.equal(old.status, 401);
    assert.equal((old.body as { error: string }).error, 'invalid_client');
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(during.token!) })).status, 401, "the old pair's token stopped too");
    assert.equal((await token({ key, secret })).status, 200);
    await page.goto(`${base}/apps/${app!.id}`);
    assert.equal(await page.locator('td:text-is("expired")').count(), 1, 'the old key expired');
    await screenshot(page, 'app-after-overlap');
    await context.close();
  });
});

// The API reference's try-it panels: a developer invited by the operator signs up, registers an
// app, and from the reference page gets a token and calls an operation on the gateway, which
// allows the portal's origin in the cors policies of the operations and of oauth.policies.
describe('API reference in Chromium', { skip: missing }, () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let browser: Browser;
  let gatewayUrl: string;

  before(async () => {
    // Both origins go into the config: the portal's into the cors policies, the gateway's into gatewayUrl (and the CSP's connect-src).
    const [gatewayPort, portalPort] = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const portalOrigin = `http://127.0.0.1:${portalPort}`;
    upstream = await startUpstream((_req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'pets' }).end(JSON.stringify({ id: 7, changed: true, received: JSON.parse(body || 'null') }));
    });
    const temp = tempDir();
    writePets(temp.dir);
    gw = await startTestGateway(
      {
        upstreams: `  pets:\n    url: ${upstream.url}\n`,
        oauth: `  issuer: ${gatewayUrl}\n  policies:\n    - cors: { origins: ['${portalOrigin}'] }\n`,
        // The same operations with JWT access tokens: the try-it panels work with either format.
        products: `  pets:\n    displayName: Pet store\n    openapi: [pets]\n    portal: true\n  pets-signed:\n    displayName: Signed pet store\n    openapi: [pets]\n    portal: true\n    accessTokenFormat: jwt\n`,
        extra: `openapi:
  pets:
    file: pets.yaml
    upstream: pets
    policies:
      - cors: { origins: ['${portalOrigin}'], exposeHeaders: [X-Upstream] }
portal:
  listen: { port: ${portalPort} }
  title: Test portal
  signup: invited
  gatewayUrl: ${gatewayUrl}
`,
      },
      { dir: temp.dir, port: gatewayPort },
    );
    assert.equal(gw.url, gatewayUrl);
    assert.equal(gw.gateway.portalUrl, portalOrigin);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await upstream?.close();
  });

  test('sign up with an invitation, register an app, open the reference, fill the try-it panel and send: the upstream gets exactly that call', async () => {
    const base = gw.gateway.portalUrl!;
    await createDeveloper(gw.admin, { email: 'grace@example.com', name: 'Grace' });
    const { code } = await inviteDeveloper(gw.admin, 'grace@example.com');
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));

    // Without JavaScript the panels are their token and curl lines.
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const noScript = await plain.newPage();
    await noScript.goto(`${base}/products/pets/reference`);
    assert.equal(await noScript.locator('#op-updatePet form.try-form').isVisible(), false);
    assert.match((await noScript.locator('#op-updatePet code.curl').textContent())!, /^curl -X PUT '[^']+\/v2\/pets\/42' \\\n/);
    await screenshot(noScript, 'reference-without-javascript');
    await plain.close();

    // Logged out, the panels build curl lines and say how to send.
    await page.goto(`${base}/products/pets/reference`);
    assert.equal(await page.locator('h1').textContent(), 'Pet store: API reference');
    assert.equal(await page.locator('#op-updatePet form.try-form').isVisible(), true, 'the script shows the form');
    assert.equal(await page.locator('#op-updatePet .try-form a[href="/login"]').textContent(), 'Log in');

    await page.goto(`${base}/signup?${new URLSearchParams({ email: 'grace@example.com', invitation: code })}`);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button:has-text("Sign up")');
    await page.waitForURL(`${base}/apps`);
    await page.goto(`${base}/apps/new?product=pets`);
    await page.fill('input[name=name]', 'Grace <pets> app');
    await page.click('button:has-text("Register app")');
    await page.waitForURL(REVEAL_URL);
    const key = (await page.locator('#app-key').textContent())!;
    const secret = (await page.locator('#app-secret').textContent())!;

    await page.goto(`${base}/products/pets`);
    await page.click('text=API reference and try-it');
    await page.waitForURL(`${base}/products/pets/reference`);
    const panel = page.locator('#op-updatePet .try');
    const curl = panel.locator('code.curl');
    // The script's curl line for the document's example is the one the server rendered.
    assert.equal(
      await curl.textContent(),
      `curl -X PUT '${gatewayUrl}/v2/pets/42' \\\n  -H "Authorization: Bearer $TOKEN" \\\n  -H 'Content-Type: application/json' \\\n  --data-binary '{\n  "name": "Rex",\n  "owner": {\n    "name": "Ada",\n    "address": {\n      "city": "London"\n    }\n  },\n  "tags": [\n    "good"\n  ]\n}'`,
    );
    assert.deepEqual(await panel.locator('select[data-field=app] option').allTextContents(), [`Grace <pets> app (${key})`]);
    await screenshot(page, 'reference');

    await panel.locator('select[data-field=app]').selectOption(key);
    await panel.locator('input[data-field=secret]').fill(secret);
    await panel.locator('input[data-name=petId]').fill('7');
    const body = `{"name":"Rex's","tags":["small"]}`;
    await panel.locator('textarea[data-body]').fill(body);
    assert.equal(
      await curl.textContent(),
      `curl -X PUT '${gatewayUrl}/v2/pets/7' \\\n  -H "Authorization: Bearer $TOKEN" \\\n  -H 'Content-Type: application/json' \\\n  --data-binary '{"name":"Rex'\\''s","tags":["small"]}'`,
    );
    assert.equal(await page.locator('#op-getPet input[data-field=secret]').inputValue(), secret, 'the secret typed once serves every panel');

    await panel.locator('button:has-text("Send")').click();
    const status = panel.locator('.try-status');
    await status.waitFor();
    assert.equal(await status.textContent(), '200 OK');
    assert.equal(await panel.locator('.try-body').textContent(), JSON.stringify({ id: 7, changed: true, received: { name: "Rex's", tags: ['small'] } }, null, 2));
    assert.match((await panel.locator('.try-headers').textContent())!, /^x-upstream: pets$/m, 'the header the cors policy exposes');
    const call = upstream.received.at(-1)!;
    assert.equal(upstream.received.length, 1, 'one call reached the upstream: the preflights did not');
    assert.equal(`${call.method} ${call.url}`, 'PUT /v2/pets/7');
    assert.equal(call.body, body);
    assert.equal(call.headers['content-type'], 'application/json');
    assert.equal(call.headers.authorization, undefined, 'the token stops at the gateway');
    await screenshot(page, 'reference-try-it');

    // A wrong secret: the token endpoint's refusal, in words.
    const owners = page.locator('#op-listOwners .try');
    await owners.locator('input[data-field=secret]').fill('not-the-secret');
    await owners.locator('button:has-text("Send")').click();
    await owners.locator('.try-result .error').waitFor();
    assert.match((await owners.locator('.try-result .error').textContent())!, /^The token endpoint refused: 401 invalid_client/);
    // A header the route's cors policy does not allow: the browser refuses, and the page says what the developer can do.
    await owners.locator('input[data-field=secret]').fill(secret);
    await owners.locator('input[data-name=X-Trace]').fill('trace-1');
    await owners.locator('button:has-text("Send")').click();
    await owners.locator('.try-result .error:has-text("Your browser did not let")').waitFor();
    assert.equal(
      await owners.locator('.try-result .error').textContent(),
      `Your browser did not let this page read the answer of GET ${gatewayUrl}/v2/owners: the API does not accept calls from pages of this portal (${base}) with the headers this one sends (authorization, X-Trace), or it cannot be reached from your browser. You can still make the call with the curl lines above, in a terminal. To send it from this page, ask the API's operator to allow this portal and these headers for the operation.`,
    );
    assert.equal(upstream.received.length, 1, 'the refused preflight reached nothing');
    await screenshot(page, 'reference-try-it-errors');
    // CORS failures are logged by Chromium itself; nothing else went wrong in the script.
    assert.deepEqual(
      errors.filter((e) => !/CORS|Failed to load resource|ERR_FAILED/.test(e)),
      [],
    );
    await context.close();
  });

  test('a product with JWT access tokens: its page names the format and links the JWKS; its try-it panel gets a JWT and calls with it', async () => {
    const base = gw.gateway.portalUrl!;
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${base}/login`);
    await page.fill('input[name=email]', 'grace@example.com');
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button:has-text("Log in")');
    await page.waitForURL(`${base}/apps`);
    await page.goto(`${base}/apps/new?product=pets-signed`);
    await page.fill('input[name=name]', 'signed app');
    await page.click('button:has-text("Register app")');
    await page.waitForURL(REVEAL_URL);
    const key = (await page.locator('#app-key').textContent())!;
    const secret = (await page.locator('#app-secret').textContent())!;

    await page.goto(`${base}/products/pets`);
    assert.match((await page.locator('dl.facts').textContent())!, /Token format\s*opaque: only the gateway can read them/);
    await page.goto(`${base}/products/pets-signed`);
    assert.match((await page.locator('dl.facts').textContent())!, /Token format\s*signed JWTs \(RFC 9068\) for the audience pets-signed, verifiable with the gateway's JWKS/);
    const jwks = await page.locator('a#jwks').getAttribute('href');
    assert.equal(jwks, `${gatewayUrl}/.well-known/jwks.json`);
    assert.equal((await call(jwks!)).status, 200);
    await screenshot(page, 'product-jwt');

    await page.goto(`${base}/products/pets-signed/reference`);
    const panel = page.locator('#op-getPet .try');
    await panel.locator('select[data-field=app]').selectOption(key);
    await panel.locator('input[data-field=secret]').fill(secret);
    await panel.locator('input[data-name=petId]').fill('9');
    await panel.locator('button:has-text("Send")').click();
    const status = panel.locator('.try-status');
    await status.waitFor();
    assert.equal(await status.textContent(), '200 OK');
    const received = upstream.received.at(-1)!;
    assert.equal(`${received.method} ${received.url}`, 'GET /v2/pets/9');
    assert.equal(received.headers['x-gateway-product'], 'pets-signed');
    assert.equal(received.headers['x-gateway-client-id'], key);
    await context.close();
  });
});

describe('public apps and redirect URIs in Chromium', { skip: missing }, () => {
  let gw: TestGateway;
  let browser: Browser;

  before(async () => {
    gw = await startTestGateway({
      products: `
  signin:
    displayName: Sign-in API
    description: Calls on behalf of your users.
    routes: [hello]
    grants: [authorization_code, refresh_token]
    login: users
    portal: true
`,
      oauth: '  issuer: http://127.0.0.1',
      extra: 'portal:\n  listen: { port: 0 }\n  title: Test portal\n  signup: invited\n',
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  test('without JavaScript: register a public app with two redirect URIs, see its key and no secret, then edit its redirect URIs (a refusal on the form first)', async () => {
    const base = gw.gateway.portalUrl!;
    await createDeveloper(gw.admin, { email: 'mary@example.com', name: 'Mary' });
    const { code } = await inviteDeveloper(gw.admin, 'mary@example.com');
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${base}/signup?${new URLSearchParams({ email: 'mary@example.com', invitation: code })}`);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button:has-text("Sign up")');
    await page.waitForURL(`${base}/apps`);

    await page.click('text=Register a new app');
    await page.fill('input[name=name]', 'Mary <spa>');
    await page.check('input[name=product][value=signin]');
    await page.check('input[name=type][value=public]');
    await page.fill('textarea[name=redirect_uris]', 'https://spa.example.com/callback\nhttp://127.0.0.1/callback');
    await assertRadiosBesideTheirNames(page);
    await screenshot(page, 'register-public');
    await page.click('button:has-text("Register app")');
    await page.waitForURL(REVEAL_URL);
    assert.equal(await page.locator('h1').textContent(), 'App Mary <spa> registered');
    assert.equal(await page.locator('#app-no-secret').textContent(), 'none: a public app has no secret');
    assert.equal(await page.locator('#app-secret').count(), 0);
    assert.equal(await page.locator('.warning').count(), 0, 'no secret to copy, no warning');
    const key = (await page.locator('#app-key').textContent())!;
    await screenshot(page, 'public-registered');

    await page.click('text=Go to the app');
    assert.equal(await page.locator('#app-type').textContent(), 'public: a key, no secret');
    assert.deepEqual(await page.locator('#redirect-uris li').allTextContents(), ['https://spa.example.com/callback', 'http://127.0.0.1/callback']);
    assert.equal(await page.locator(`td code:text-is("${key}")`).count(), 1);
    await screenshot(page, 'public-app');

    await page.fill('#redirect-uris-form textarea', 'https://spa.example.com/callback#done');
    await page.click('button:has-text("Save redirect URIs")');
    assert.equal(await page.locator('#redirect-uris-form .error').textContent(), 'the redirect URI "https://spa.example.com/callback#done" must not have a fragment');
    assert.equal(await page.locator('#redirect-uris-form textarea').inputValue(), 'https://spa.example.com/callback#done', 'the form keeps what was typed');
    await screenshot(page, 'redirect-uris-refused');

    await page.fill('#redirect-uris-form textarea', 'https://spa.example.com/signed-in\ncom.example.spa:/callback');
    await page.click('button:has-text("Save redirect URIs")');
    assert.equal(await page.locator('.notice').textContent(), 'The redirect URIs are saved.');
    assert.deepEqual(await page.locator('#redirect-uris li').allTextContents(), ['https://spa.example.com/signed-in', 'com.example.spa:/callback']);
    await screenshot(page, 'redirect-uris-saved');
    const [app] = await listApps(gw.admin, { developer: 'mary@example.com' });
    assert.deepEqual({ type: app?.type, redirectUris: app?.redirectUris }, { type: 'public', redirectUris: ['https://spa.example.com/signed-in', 'com.example.spa:/callback'] });
    await context.close();
  });
});

/** Each radio button of the page's choices sits left of its name, on its line, at desktop and at phone width. */
async function assertRadiosBesideTheirNames(page: Page): Promise<void> {
  for (const viewport of [PHONE, DESKTOP]) {
    await page.setViewportSize(viewport);
    for (const choice of await page.locator('label.choice').all()) {
      const radio = (await choice.locator('input[type=radio]').boundingBox())!;
      const name = (await choice.locator('strong').boundingBox())!;
      assert.ok(radio.x + radio.width <= name.x && radio.y < name.y + name.height && name.y < radio.y + radio.height, `${viewport.width}px: the radio is left of its name, on its line`);
    }
  }
}

// A developer pastes PEM certificates made by openssl on the app's page, without JavaScript: the
// gateway takes client certificates from a trusted proxy (this test) in X-SSL-Client-Cert.
describe('client certificates in Chromium', { skip: missing }, () => {
  const HEADER = 'X-SSL-Client-Cert';
  const temp = tempDir();
  let gw: TestGateway;
  let browser: Browser;
  let one: Pair;
  let two: Pair;

  before(async () => {
    const certs = makeCertificates(temp.dir);
    one = certs.selfSigned('one', '/CN=<script>alert(1)<\\/script>');
    // One long word: it must wrap in its card at phone width.
    two = certs.selfSigned('two', '/O=Example/CN=orders-client-of-a-name-too-long-for-a-phone.example.com');
    gw = await startTestGateway(
      {
        products: '  plain:\n    displayName: Plain API\n    description: Calls of your own server.\n    routes: [hello]\n    portal: true\n',
        listen: `  trustedProxies: [127.0.0.1]\n  clientCertificateHeader:\n    name: ${HEADER}\n    format: nginx`,
        extra: 'portal:\n  listen: { port: 0 }\n  title: Test portal\n  signup: invited\n',
      },
      { dir: temp.dir },
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    temp.remove();
  });

  const withCertificate = (key: string, pair: Pair) =>
    call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', [HEADER]: encodeURIComponent(pair.pem) },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: key }).toString(),
    });
  /** A row of the table as a reader sees it: thumbprint, subject, expiry (notAfter in UTC). */
  const row = (pair: Pair) => {
    const x509 = new X509Certificate(pair.pem);
    return [pair.thumbprint, x509.subject.replaceAll('\n', ', '), `${x509.validToDate.toISOString().slice(0, 16).replace('T', ' ')} UTC`];
  };
  const rows = async (page: Page) =>
    Promise.all(
      (await page.locator('#certificates tbody tr').all()).map(async (tr) =>
        Promise.all(['Thumbprint', 'Subject', 'Expires'].map(async (label) => (await tr.locator(`td[data-label="${label}"]`).textContent())!)),
      ),
    );
  /** At the page's current width, each thumbprint and subject stays inside its row (a card at phone width). */
  async function assertInsideRows(page: Page): Promise<void> {
    for (const tr of await page.locator('#certificates tbody tr').all()) {
      const card = (await tr.boundingBox())!;
      for (const cell of await tr.locator('td[data-label]').all()) {
        const box = (await cell.boundingBox())!;
        assert.ok(box.x >= card.x && box.x + box.width <= card.x + card.width + 0.5, `a cell (${box.x}–${box.x + box.width}) inside its row (${card.x}–${card.x + card.width})`);
      }
      const code = (await tr.locator('code').boundingBox())!;
      assert.ok(code.x + code.width <= card.x + card.width + 0.5, 'the thumbprint wraps inside its row');
    }
  }

  test('without JavaScript: paste a PEM, see its thumbprint, subject and expiry; garbage is refused and changes nothing; add a second; remove one after confirming', async () => {
    const base = gw.gateway.portalUrl!;
    await createDeveloper(gw.admin, { email: 'cert@example.com', name: 'Cert' });
    const { code } = await inviteDeveloper(gw.admin, 'cert@example.com');
    const { app, key, secret } = await createApp(gw.admin, { developer: 'cert@example.com', name: 'Cert <server>', product: 'plain' });
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: DESKTOP });
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${base}/signup?${new URLSearchParams({ email: 'cert@example.com', invitation: code })}`);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button:has-text("Sign up")');
    await page.waitForURL(`${base}/apps`);
    await page.click('text=Cert <server>');
    assert.equal(await page.locator('h2:text-is("Client certificates") + p').textContent(), EXPLAINED);
    assert.equal(await page.locator('h2:text-is("Client certificates") ~ p').nth(1).textContent(), 'None registered: the app authenticates with its secret.');
    await screenshot(page, 'certificates-none');

    await page.fill('textarea[name=certificate]', one.pem);
    await page.click('button:has-text("Register the certificate")');
    await page.waitForURL(`${base}/apps/${app.id}?done=certificate-first`);
    assert.equal(await page.locator('.notice').textContent(), 'The certificate is registered: the app now authenticates with it, no longer with its secret.');
    assert.deepEqual(await rows(page), [row(one)]);
    assert.equal(row(one)[1], 'CN=\\<script\\>alert(1)\\</script\\>');
    assert.equal(await page.locator('main script').count(), 0, 'the subject is text');
    assert.equal((await withCertificate(key, one)).status, 200, 'the app authenticates with the certificate');
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key, secret: secret! })).status, 401, 'and no longer with its secret');

    await page.fill('textarea[name=certificate]', 'not a certificate');
    await page.click('button:has-text("Register the certificate")');
    assert.equal(await page.locator('#certificate-form .error').textContent(), 'not a PEM certificate (-----BEGIN CERTIFICATE-----) nor a SHA-256 thumbprint');
    assert.equal(await page.locator('textarea[name=certificate]').inputValue(), 'not a certificate', 'the form keeps what was pasted');
    assert.deepEqual(await rows(page), [row(one)], 'nothing changed');
    const stored = (await gw.admin.store.apps.findAppById(app.id))?.certificateAuth;
    assert.deepEqual(stored?.method === 'self_signed_tls_client_auth' && stored.certificates.map((c) => c.thumbprint), [one.thumbprint]);
    await screenshot(page, 'certificate-refused');

    await page.fill('textarea[name=certificate]', two.pem);
    await page.click('button:has-text("Register the certificate")');
    await page.waitForURL(`${base}/apps/${app.id}?done=certificate-added`);
    assert.equal(await page.locator('.notice').textContent(), 'The certificate is registered; the others still work.');
    assert.deepEqual(await rows(page), [row(one), row(two)]);
    assert.equal((await withCertificate(key, two)).status, 200);
    await assertInsideRows(page);
    await page.setViewportSize(PHONE);
    await assertInsideRows(page);
    await page.setViewportSize(DESKTOP);
    await screenshot(page, 'certificates-two');

    await page.locator('#certificates tbody tr').first().locator('text=Remove…').click();
    await page.waitForURL(`${base}/apps/${app.id}/certificates/${one.thumbprint}/remove`);
    assert.equal(await page.locator('h1').textContent(), 'Remove a certificate of Cert <server>?');
    assert.equal(await page.locator('main > p').first().textContent(), 'The app can no longer authenticate with it; its other certificates keep working.');
    await screenshot(page, 'certificate-remove');
    await page.click('button:has-text("Remove the certificate")');
    await page.waitForURL(`${base}/apps/${app.id}?done=certificate-removed`);
    assert.equal(await page.locator('.notice').textContent(), 'The certificate is removed.');
    assert.deepEqual(await rows(page), [row(two)]);
    assert.equal((await withCertificate(key, one)).status, 401, 'the removed one no longer authenticates');
    assert.equal((await withCertificate(key, two)).status, 200);
    assert.deepEqual(dialogs, [], 'no script ran');
    await context.close();
  });
});
