// The portal as a new developer first meets it (issue 34, item 5), in Chromium at 1280 and at
// 390 px: sign up, check the email (and ask for it again), log in, a forgotten password, the
// products and a product, an app's key and secret shown once, its analytics (issue 34, item 4),
// revoking its only key, an app
// waiting for approval, the API reference of examples/orders.openapi.yaml (the document
// gateway.example.yaml serves) and its try-it panels. Every page is checked by ./layout.ts (no
// sideways scrolling, nothing past its box, no word broken inside, chart labels of 11 px or more,
// a favicon and no failed answer) and saved under docs/portal/screenshots/ as <page>-<width>.png.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { freePort } from '../../src/http/listener.ts';
import { bearer, call, startTestGateway, startUpstream, tempDir, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';
import { linkIn, startMailbox, type Mailbox } from '../portal/mailbox.ts';
import { writePets } from '../portal/pets.ts';
import { checkLayout, DESKTOP, failedAnswers, PHONE } from './layout.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
if (missing) {
  process.stderr.write(`\n!!! BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium, as .ci/run does) !!!\n\n`);
}

const ORDERS = path.join(import.meta.dirname, '..', '..', 'examples', 'orders.openapi.yaml');
const EMAIL = 'ada.lovelace@example.com';
const PASSWORD = 'a long enough password';
const REVEAL_URL = /\/apps\/([A-Za-z0-9_-]+)\/secret$/;

describe('the portal a new user meets, at 1280 and 390 px', { skip: missing }, () => {
  let gw: TestGateway;
  let mailbox: Mailbox;
  let upstream: Upstream;
  let browser: Browser;
  let context: BrowserContext;
  let base: string;
  let gatewayUrl: string;
  const temp = tempDir();

  before(async () => {
    mailbox = await startMailbox();
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ subject: null, orders: [{ id: '1', item: 'teapot', quantity: 1 }] }));
    });
    // The portal's origin goes into the cors policies and the gateway's into gatewayUrl, so both ports are chosen first.
    const [gatewayPort, portalPort] = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const portalOrigin = `http://127.0.0.1:${portalPort}`;
    writePets(temp.dir);
    gw = await startTestGateway(
      {
        upstreams: `  orders-backend:\n    url: ${upstream.url}\n`,
        oauth: `  issuer: ${gatewayUrl}\n  policies:\n    - cors: { origins: ['${portalOrigin}'] }\n`,
        // Numbers as long as real quotas have, and the names of gateway.example.yaml's orders API.
        products: `
  greetings:
    displayName: Greetings API
    description: Hello, answered by the gateway itself, up to 1,000,000,000 calls a day for each app.
    routes: [hello]
    scopes: [hello:read]
    grants: [client_credentials]
    quota: { limit: 1000000000, interval: day }
    portal: true
  shop:
    displayName: Orders
    description: Orders of the demo backend.
    openapi: [orders]
    grants: [client_credentials]
    approval: auto
    portal: true
  partners:
    displayName: Partner API
    description: For partners only; the API team approves each app before it works.
    routes: [hello]
    approval: manual
    portal: true
  pets:
    displayName: Pet store
    description: Pets and their owners.
    openapi: [pets]
    portal: true
`,
        // The orders API allows the portal's pages; the pet store does not (its try-it shows what a developer can do then).
        extra: `openapi:
  orders:
    file: ${ORDERS}
    upstream: orders-backend
    basePath: /shop/v1
    policies:
      - cors: { origins: ['${portalOrigin}'], exposeHeaders: [Location] }
  pets:
    file: pets.yaml
    upstream: orders-backend
portal:
  listen: { port: ${portalPort} }
  title: Acme developers
  signup: open
  gatewayUrl: ${gatewayUrl}
${mailbox.yaml}`,
      },
      { dir: temp.dir, port: gatewayPort },
    );
    base = gw.gateway.portalUrl!;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    // One browser for the whole visit, as a new user has: its cookies carry the session from test to test.
    context = await browser.newContext({ viewport: DESKTOP });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await upstream?.close();
    await mailbox?.close();
    temp.remove();
  });

  /** A new tab of the visit, and the list its failed answers go to. */
  async function tab(): Promise<{ page: Page; failed: string[] }> {
    const page = await context.newPage();
    return { page, failed: failedAnswers(page, base) };
  }

  /** The header names who is logged in, beside the way out. */
  async function assertHeaderNames(page: Page, email: string): Promise<void> {
    assert.equal(await page.locator('header #signed-in').textContent(), `Logged in as ${email}`);
    assert.equal(await page.locator('header button:has-text("Log out")').isVisible(), true);
  }

  test('before signing up: the products, a product page (its quota and grant types whole at 390 px)', async () => {
    const { page, failed } = await tab();
    await page.goto(base);
    assert.equal(await page.locator('h1').textContent(), 'API products');
    await checkLayout(page, 'products', failed);
    await page.click('text=Greetings API');
    assert.match((await page.locator('dl.facts').textContent())!, /Grant types\s*client_credentials/);
    assert.match((await page.locator('dl.facts').textContent())!, /Quota\s*1,000,000,000 calls per day per app/);
    await checkLayout(page, 'product', failed);
    await page.close();
  });

  test('sign up; "Check your email" sends the link again (a second mail, throttled like sign-ups); "Forgot your password" leads back to log in; log in', async () => {
    const { page, failed } = await tab();
    await page.goto(`${base}/signup`);
    await page.fill('input[name=email]', EMAIL);
    await page.fill('input[name=name]', 'Ada Lovelace');
    await page.fill('input[name=password]', PASSWORD);
    await checkLayout(page, 'signup', failed);
    await page.click('button:has-text("Sign up")');
    assert.equal(await page.locator('h1').textContent(), 'Check your email');
    await checkLayout(page, 'check-email', failed);
    const first = await mailbox.next(EMAIL);

    await page.click('a#resend');
    assert.equal(await page.locator('h1').textContent(), 'Send the confirmation link again');
    await page.fill('input[name=email]', EMAIL);
    await checkLayout(page, 'resend', failed);
    await page.click('button:has-text("Send the link again")');
    assert.equal(await page.locator('h1').textContent(), 'Check your email');
    assert.match((await page.locator('main').textContent())!, /We mailed a new link to the address you gave/);
    const second = await mailbox.next(EMAIL);
    assert.equal(second.subject, 'Confirm your email address for Acme developers');
    const origin = base.replace('127.0.0.1', 'localhost');
    assert.notEqual(linkIn(second, origin), linkIn(first, origin), 'a new link');

    // The first link was replaced: only the second confirms.
    await page.goto(`${base}${linkIn(second, origin)}`);
    await page.fill('input[name=email]', EMAIL);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button:has-text("Confirm")');
    await page.waitForURL(`${base}/apps?done=verified`);
    await assertHeaderNames(page, EMAIL);
    await page.click('button:has-text("Log out")');
    await page.waitForURL(`${base}/`);
    assert.equal(await page.locator('#signed-in').count(), 0, 'nobody is named once logged out');

    await page.click('header >> text=Log in');
    await checkLayout(page, 'login', failed);
    await page.click('text=Set a new one');
    assert.equal(await page.locator('h1').textContent(), 'Forgot your password');
    await checkLayout(page, 'forgot', failed);
    await page.click('a#back-to-login');
    await page.waitForURL(`${base}/login`);
    await page.fill('input[name=email]', EMAIL);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button:has-text("Log in")');
    await page.waitForURL(`${base}/apps`);
    await assertHeaderNames(page, EMAIL);
    await page.close();
  });

  test('register an app: the key and secret once, each on one line with its Copy button beside it; the app page and its analytics; revoking its only key asks first, and the app then says it has no working key', async () => {
    const { page, failed } = await tab();
    await page.goto(`${base}/apps/new?product=greetings`);
    await page.fill('input[name=name]', 'Ada’s first app');
    await page.click('button:has-text("Register app")');
    await page.waitForURL(REVEAL_URL);
    const id = REVEAL_URL.exec(page.url())![1]!;
    const key = (await page.locator('#app-key').textContent())!;
    const secret = (await page.locator('#app-secret').textContent())!;
    await assertHeaderNames(page, EMAIL);
    await checkLayout(page, 'app-secret', failed, {
      atWidth: async (width) => {
        for (const token of ['app-key', 'app-secret']) {
          const box = (await page.locator(`#${token}`).boundingBox())!;
          const copy = (await page.locator(`button.copy[data-copy=${token}]`).boundingBox())!;
          assert.ok(box.height < 40, `${width}px: ${token} is one line (${box.height}px high)`);
          assert.ok(copy.x >= box.x + box.width - 1, `${width}px: the Copy button of ${token} is right of it`);
          assert.ok(copy.y < box.y + box.height && box.y < copy.y + copy.height, `${width}px: the Copy button of ${token} is on its line`);
          assert.ok(copy.x + copy.width <= width, `${width}px: and on the screen`);
        }
      },
    });
    // The whole secret is copied, however little of it its box shows.
    await page.click('button.copy[data-copy=app-secret]');
    // A locator's wait, not waitForFunction: the portal's CSP (no 'unsafe-eval') refuses the string predicate it evaluates.
    await page.locator('button.copy[data-copy=app-secret]:text-is("Copied")').waitFor();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret);

    // Calls this hour, for the usage and the analytics: three answered, one refused (the route is not the product's).
    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key, secret });
    assert.equal(issued.status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 200);
    assert.equal((await call(`${gw.url}/v1/admin`, { headers: bearer(issued.body.access_token) })).status, 403);
    await page.click('text=Go to the app');
    assert.match((await page.locator('dl.facts').textContent())!, /Status\s*active/);
    assert.equal(await page.locator('#usage-24h').textContent(), 'In the last 24 hours: 4 calls, 25.0\u00a0% of them answered 4xx or 5xx.');
    await checkLayout(page, 'app', failed);

    await page.click('#analytics-link');
    await page.waitForURL(`${base}/apps/${id}/analytics`);
    await checkAnalytics(page, failed);
    await page.click('text=Back to the app');

    await page.click('text=Revoke…');
    await page.waitForURL(`${base}/apps/${id}/keys/${key}/revoke`);
    assert.equal(await page.locator('h1').textContent(), 'Revoke a key of Ada’s first app?');
    assert.match((await page.locator('#revoke-effect').textContent())!, /^It is the app's only working key: once it is revoked, the app cannot get tokens/);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key, secret })).status, 200, 'nothing is revoked by opening the page');
    await checkLayout(page, 'revoke', failed);
    await page.click('button:has-text("Revoke the key")');
    await page.waitForURL(`${base}/apps/${id}?done=revoked`);
    assert.equal(await page.locator('p.notice:not(.pending)').textContent(), 'The key is revoked.');
    assert.match((await page.locator('#no-working-key').textContent())!, /^This app has no working key: it cannot get tokens\./);
    assert.match((await page.locator('dl.facts').textContent())!, /Status\s*no working key/);
    assert.equal(await page.locator(`tr:has(code:text-is("${key}")) td[data-label=State]`).textContent(), 'revoked');
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key, secret })).status, 401);
    await checkLayout(page, 'app-revoked', failed);
    await page.click('header >> text=My apps');
    assert.equal(await page.locator('td[data-label=Status]').textContent(), 'no working key');
    await page.close();
  });

  /**
   * The analytics of an app with 3 calls answered and 1 refused this hour: what a screen reader
   * finds (the chart an image named after the table of its numbers, the figures in tables), and
   * the layout, the charts' numbers closed and then open.
   */
  async function checkAnalytics(page: Page, failed: string[]): Promise<void> {
    const cells = async (table: Locator) => Promise.all((await table.getByRole('row').all()).map((row) => row.locator('th, td').allTextContents()));
    for (const [window, per, title] of [
      ['24h', 'hour', 'Last 24 hours'],
      ['30d', 'day', 'Last 30 days'],
    ] as const) {
      const section = page.getByRole('region', { name: title });
      assert.deepEqual(
        await section
          .locator('dl.figures dd')
          .allTextContents()
          .then((t) => t.slice(0, 2)),
        ['4', '25.0\u00a0%'],
        `${window}: calls and error rate`,
      );
      assert.match((await section.locator(`#p50-${window}`).textContent())!, /^\d+(\.\d)?\u00a0m?s$/);
      assert.deepEqual(await cells(section.getByRole('table', { name: `${title} By status class` })), [
        ['Status class', 'Calls', 'Share'],
        ['2xx success', '3', '75.0\u00a0%'],
        ['4xx refused', '1', '25.0\u00a0%'],
        ['5xx failed', '0', '0.0\u00a0%'],
      ]);
      assert.deepEqual(await cells(section.getByRole('table', { name: `${title} By route` })), [
        ['Route', 'Calls', 'Errors', 'Error rate'],
        ['hello', '3', '0', '0.0\u00a0%'],
        ['admin-only', '1', '1', '100.0\u00a0%'],
      ]);
      // The chart is an image whose name points to the table of its numbers, which a tap on its disclosure shows.
      const table = `Calls per ${per}, ${title.toLowerCase()}`;
      assert.equal(await section.getByRole('img', { name: `Calls per ${per} by status class, as bars: the table “${table}” after the chart has their numbers.` }).count(), 1);
      assert.equal(await section.getByRole('table', { name: table }).count(), 0, 'closed at first');
      assert.equal(await section.locator('g.bar').count(), window === '24h' ? 25 : 31);
    }
    await checkLayout(page, 'analytics', failed, {
      atWidth: async (width) => {
        // The figures: four across on a desktop, two by two on a phone.
        const tops = new Set((await Promise.all((await page.locator('#window-24h ~ dl.figures > div').all()).map((f) => f.boundingBox()))).map((b) => Math.round(b!.y)));
        assert.equal(tops.size, width === DESKTOP.width ? 1 : 2, `${width}px: the figures in ${tops.size} rows`);
        // The axis labels do not run into one another.
        for (const axis of await page.locator('ol.chart-axis').all()) {
          const boxes = await Promise.all((await axis.locator('.label').all()).map((l) => l.boundingBox()));
          for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i - 1]!.x + boxes[i - 1]!.width < boxes[i]!.x, `${width}px: axis label ${i} clear of the one before`);
        }
      },
    });
    for (const summary of await page.locator('details.numbers > summary').all()) await summary.click();
    const hours = page.getByRole('table', { name: 'Calls per hour, last 24 hours' });
    const rows = await cells(hours);
    assert.equal(rows.length, 1 + 25);
    assert.deepEqual(
      rows.filter((r) => r.at(-1) !== '0'),
      [
        ['Hour (UTC)', '2xx', '4xx', '5xx', 'Calls'],
        [rows.at(-1)![0]!, '3', '1', '0', '4'],
      ],
    );
    await checkLayout(page, 'analytics-numbers', failed, { shot: page.locator('details.numbers').first() });
  }

  test('an app waiting for approval: its notice says it waits for an operator (not a success), and its key reads "pending"', async () => {
    const { page, failed } = await tab();
    await page.goto(`${base}/apps/new?product=partners`);
    await page.fill('input[name=name]', 'Partner app');
    await page.click('button:has-text("Register app")');
    await page.waitForURL(REVEAL_URL);
    const notice = page.locator('#pending-notice');
    assert.match((await notice.textContent())!, /^Waiting for an operator's approval\. The API team approves apps for this product before they work/);
    assert.equal(await notice.getAttribute('class'), 'notice pending');
    await checkLayout(page, 'pending-secret', failed);
    await page.click('text=Go to the app');
    assert.match((await page.locator('dl.facts').textContent())!, /Status\s*waiting for approval/);
    assert.equal(await page.locator('td[data-label=State]').textContent(), 'pending: usable once the app is approved');
    // Not the green of a success: the notice is drawn in the colour of the text around it, with a mark of its own.
    const [color, text] = await page.evaluate<[string, string]>("[getComputedStyle(document.querySelector('#pending-notice')).color, getComputedStyle(document.querySelector('main')).color]");
    assert.equal(color, text);
    await checkLayout(page, 'app-pending', failed);
    await page.close();
  });

  test('the API reference of examples/orders.openapi.yaml: a sidebar (a box to open at 390 px), a filter box, the document to download, the Problem schema once, and no "Orders" then "orders"', async () => {
    const { page, failed } = await tab();
    await page.goto(`${base}/products/shop`);
    await page.click('text=API reference and try-it');
    await page.waitForURL(`${base}/products/shop/reference`);
    // Each error response names its schema and links to it; the table is shown once, after the operations.
    assert.equal(await page.locator('section.schema h4 code:text-is("Problem")').count(), 1);
    assert.equal(await page.locator('#schema-orders-problem table').count(), 1);
    assert.ok((await page.locator('a.schema-link[href="#schema-orders-problem"]').count()) >= 6, 'every 401 and 403 links to it');
    // The document's title is Orders and its one tag orders: said once.
    const toc = page.locator('details.toc');
    assert.deepEqual(await toc.locator('.toc-api').allTextContents(), ['Orders']);
    assert.equal(await toc.locator('li.toc-tag').count(), 0, 'no group saying "orders" again');
    assert.equal(await page.locator('section.tag > h3:text-is("orders")').count(), 0);

    await checkLayout(page, 'reference', failed, {
      atWidth: async (width) => {
        const height = await page.evaluate<number>('document.documentElement.scrollHeight');
        const summary = page.locator('details.toc > summary');
        if (width === DESKTOP.width) {
          // A sidebar left of the operations, its list shown without opening anything.
          const sidebar = (await toc.boundingBox())!;
          const first = (await page.locator('section.operation').first().boundingBox())!;
          assert.ok(sidebar.x + sidebar.width <= first.x, 'the contents are left of the operations');
          assert.equal(await toc.locator('a[href="#op-getOrder"]').isVisible(), true);
          // The issue measured 11,700 px for these three operations, each 401 and 403 with the whole Problem schema.
          assert.ok(height < 9500, `three operations in ${height}px at ${width}px`);
        } else {
          // A box above the operations, closed until opened.
          assert.equal(await toc.locator('a[href="#op-getOrder"]').isVisible(), false);
          await summary.click();
          assert.equal(await toc.locator('a[href="#op-getOrder"]').isVisible(), true);
          await summary.click();
          assert.ok(height < 12500, `three operations in ${height}px at ${width}px (19,800 before)`);
        }
      },
    });

    // The filter box: words of the method, path, summary or operation.
    const filter = page.locator('#operation-filter');
    const shown = async () => Promise.all((await page.locator('section.operation:visible').all()).map((s) => s.getAttribute('id')));
    await filter.fill('place');
    assert.deepEqual(await shown(), ['op-createOrder']);
    assert.equal(await toc.locator('a[href="#op-listOrders"]').isVisible(), false);
    await filter.fill('get orders');
    assert.deepEqual(await shown(), ['op-listOrders', 'op-getOrder']);
    await filter.fill('nothing like it');
    assert.deepEqual(await shown(), []);
    assert.equal(await page.locator('#filter-none').isVisible(), true);
    await filter.fill('');
    assert.equal((await shown()).length, 3);

    // The document to download: the product's operations, with the gateway as their server.
    const link = page.locator('p.download a[download]');
    const href = (await link.getAttribute('href'))!;
    assert.equal(href, '/products/shop/openapi/orders/orders.openapi.yaml');
    const download = await page.request.get(`${base}${href}`);
    assert.equal(download.status(), 200);
    assert.equal(download.headers()['content-type'], 'application/yaml; charset=utf-8');
    const text = await download.text();
    assert.match(text, new RegExp(`^servers:\\n {2}- url: ${gatewayUrl}/shop/v1\\n {4}description: the gateway$`, 'm'));
    assert.match(text, /^ {4}get:\n {6}operationId: listOrders$/m);
    assert.match(text, /^ {8}- \$ref: "#\/components\/parameters\/OrderId"$/m);
    await page.close();
  });

  test("try-it: the token line shows the chosen app's key, never a secret; a call sent; an API that refuses the portal's pages is explained to the developer", async () => {
    const { page, failed } = await tab();
    await page.goto(`${base}/apps/new?product=shop`);
    await page.fill('input[name=name]', 'Orders app');
    await page.click('button:has-text("Register app")');
    await page.waitForURL(REVEAL_URL);
    const key = (await page.locator('#app-key').textContent())!;
    const secret = (await page.locator('#app-secret').textContent())!;

    await page.goto(`${base}/products/shop/reference`);
    const panel = page.locator('#op-listOrders .try');
    assert.equal(await panel.locator('select[data-field=app]').inputValue(), key);
    const tokenLine = `curl -u "${key}:$SECRET" -d grant_type=client_credentials -d scope="orders:read" ${gatewayUrl}/oauth2/token`;
    assert.equal(await panel.locator('code.curl-token').textContent(), tokenLine, 'the chosen app, not $KEY');
    await panel.locator('input[data-field=secret]').fill(secret);
    assert.equal(await panel.locator('code.curl-token').textContent(), tokenLine, 'the secret stays $SECRET once typed');
    assert.ok(!(await page.locator('main').textContent())!.includes(secret), 'the secret is in no text of the page');
    await panel.locator('button:has-text("Send")').click();
    await panel.locator('.try-status').waitFor();
    assert.equal(await panel.locator('.try-status').textContent(), '200 OK');
    assert.equal(upstream.received.at(-1)?.url, '/shop/v1/orders');
    await checkLayout(page, 'try-it', failed, { shot: panel });

    // The pet store's operations do not allow the portal's pages (no cors policy): the panel says what the developer can do.
    await page.goto(`${base}/apps/new?product=pets`);
    await page.fill('input[name=name]', 'Pets app');
    await page.click('button:has-text("Register app")');
    await page.waitForURL(REVEAL_URL);
    const pets = { key: (await page.locator('#app-key').textContent())!, secret: (await page.locator('#app-secret').textContent())! };
    await page.goto(`${base}/products/pets/reference`);
    const health = page.locator('#op-health .try');
    await health.locator('input[data-field=secret]').fill(pets.secret);
    await health.locator('button:has-text("Send")').click();
    const error = health.locator('.try-result .error');
    await error.waitFor();
    assert.equal(
      await error.textContent(),
      `Your browser did not let this page read the answer of GET ${gatewayUrl}/v2/health: the API does not accept calls from pages of this portal (${base}) with the headers this one sends (authorization), or it cannot be reached from your browser. You can still make the call with the curl lines above, in a terminal. To send it from this page, ask the API's operator to allow this portal and these headers for the operation.`,
    );
    assert.ok(!(await error.textContent())!.includes('policy'), "no word of the operator's config");
    await checkLayout(page, 'try-it-refused', failed, { shot: health });
    await page.close();
  });

  test('at 390 px, the header of a logged-in page names the developer, whole or cut with an ellipsis, with the log-out button on the screen', async () => {
    const { page } = await tab();
    await page.setViewportSize(PHONE);
    await page.goto(`${base}/apps`);
    await assertHeaderNames(page, EMAIL);
    const who = (await page.locator('#signed-in').boundingBox())!;
    const out = (await page.locator('header button:has-text("Log out")').boundingBox())!;
    assert.ok(who.x + who.width <= PHONE.width && out.x + out.width <= PHONE.width);
    assert.equal(await page.locator('#signed-in').getAttribute('title'), EMAIL);
    await page.close();
  });
});
