// The authorization code flow with real parts only: the app is openid-client (discovery of the
// gateway's RFC 8414 metadata, PKCE S256, state, PAR, the code and refresh grants), the browser is
// Chromium, users log in at oidc-provider (an OpenID provider the gateway is a relying party of)
// or on the gateway's own login page against an authorization server, and consent on the
// gateway's consent page; the app's redirect URI is a real HTTP server that records what it gets.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createApp, createDeveloper } from '../../src/admin/operations.ts';
import { freePort } from '../../src/http/listener.ts';
import { startFlowGateway } from '../authorize/flow.ts';
import { startOidcProvider, type OidcProvider } from '../authorize/oidc-provider.ts';
import { bearer, call, startAuthServer, startUpstream, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
if (missing) process.stderr.write(`\n!!! BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium, as .ci/run does) !!!\n\n`);

const PHONE = { width: 375, height: 667 };
/** A subject and an app name (the longest the gateway takes) of one word each, wider than a phone. */
const CAROL = 'carol.of.the.users.directory@accounts.subsidiary.examplecompany.com';
const LONG_NAME = `An${'AppNameOfOneWord'.repeat(7)}`.slice(0, 100);

/** Products besides `people` (login: the provider `idp`), each signing users in another way. */
const PRODUCTS = `  staff:
    routes: [me]
    scopes: [profile]
    grants: [authorization_code, refresh_token]
    login: idp-staff
  pushed:
    routes: [me]
    scopes: [profile]
    grants: [authorization_code, refresh_token]
    login: idp
    requirePushedAuthorizationRequests: true
  local:
    routes: [me]
    scopes: [profile]
    grants: [authorization_code, refresh_token]
    login: users
  offline:
    routes: [me]
    scopes: [profile]
    grants: [authorization_code]
    login: idp-down
  silent:
    routes: [me]
    scopes: [profile]
    grants: [authorization_code]
    login: idp-silent
  flaky:
    routes: [me]
    scopes: [profile]
    grants: [authorization_code]
    login: idp-flaky
`;

let idp: OidcProvider;
/** Takes connections and never answers: a provider that hangs. */
let silent: { url: string; close(): Promise<void> };
/** Up until a test stops it between its login and its answer reaching the gateway. */
let flaky: OidcProvider;
let auth: AuthServer;
let upstream: Upstream;
/** The apps' redirect URIs lead here: it records the URL of each request. */
let appSite: Upstream;
let gw: TestGateway & { issuer: string };
let browser: Browser;

before(async () => {
  if (missing) return;
  const port = await freePort('127.0.0.1');
  const callback = `http://127.0.0.1:${port}/oauth2/callback`;
  idp = await startOidcProvider([callback]);
  flaky = await startOidcProvider([callback]);
  // A provider the gateway never reached: down before its first login.
  const down = await startOidcProvider([callback]);
  await down.close();
  silent = await startSilentServer();
  auth = await startAuthServer({ carol: { password: 'c4rol-password', sub: CAROL } });
  upstream = await startUpstream();
  appSite = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('back at the app'));
  const providers = `identityProviders:\n${idp.yaml('idp')}${idp.yaml('idp-staff', '    subjectClaim: employee_id\n')}${down.yaml('idp-down')}${flaky.yaml('idp-flaky')}  idp-silent:
    issuer: ${silent.url}
    clientId: token-gateway
    allowInsecureHttp: true
    timeout: 200ms
`;
  gw = await startFlowGateway({ port, login: 'idp', upstreamUrl: upstream.url, authServerUrl: auth.url, products: PRODUCTS, extra: providers });
  await createDeveloper(gw.admin, { email: 'dev@example.com', name: 'Dev' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await gw?.close();
  await idp?.close();
  await flaky?.close();
  await silent?.close();
  await auth?.close();
  await upstream?.close();
  await appSite?.close();
});

async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const redirectUri = () => `${appSite.url}/callback`;

interface TestApp {
  name: string;
  key: string;
  /** Absent: a public app. */
  secret?: string;
  config: client.Configuration;
}

let apps = 0;

/** An app of `product` registered (by src/admin, as `gateway admin` does) with the redirect URI of `appSite`, and openid-client configured for it by discovery. */
async function registerApp(product: string, type: 'confidential' | 'public' = 'confidential', name = `${type}-app-${++apps}`): Promise<TestApp> {
  const { key, secret } = await createApp(gw.admin, { developer: 'dev@example.com', name, product, type, redirectUris: [redirectUri()] });
  const config = await client.discovery(new URL(gw.issuer), key, secret, secret === undefined ? client.None() : client.ClientSecretBasic(secret), {
    algorithm: 'oauth2',
    execute: [client.allowInsecureRequests],
  });
  return { name, key, ...(secret === undefined ? {} : { secret }), config };
}

/** A fresh browser (no cookies of the provider or the gateway) that reaches loopback only: oidc-provider's page imports a web font. */
async function newContext(options: { javaScriptEnabled?: boolean; viewport?: { width: number; height: number } } = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  await context.route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
  return context;
}

/** What the app asks, and the verifier and state its answer is checked with. */
async function authorizationParams(scope: string): Promise<{ params: Record<string, string>; verifier: string; state: string }> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const params = { redirect_uri: redirectUri(), scope, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state };
  return { params, verifier, state };
}

/** The app's authorization URL (openid-client's buildAuthorizationUrl), with what checks the answer. */
async function authorization(app: TestApp, scope = 'profile email'): Promise<{ url: URL; verifier: string; state: string }> {
  const { params, ...asked } = await authorizationParams(scope);
  return { url: client.buildAuthorizationUrl(app.config, params), ...asked };
}

/** At oidc-provider's login page: any password is taken for a known account. */
async function logInAtProvider(page: Page, login: string, provider = idp): Promise<void> {
  await page.waitForURL(`${provider.issuer}/interaction/**`);
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', 'any password');
  await page.click('button[type=submit]');
}

/** The gateway's consent page, checked: it names the app, its developer and every scope asked. */
async function assertConsentPage(page: Page, app: TestApp, expected: { scopes: readonly string[]; subject: string; product: string }): Promise<void> {
  await page.waitForURL(`${gw.issuer}/oauth2/consent?tx=*`);
  // <q> adds its quotation marks in CSS: the text has none.
  assert.equal(await page.locator('h1').textContent(), `Allow ${app.name} to use your account?`);
  assert.equal(await page.locator('main p strong').textContent(), expected.subject);
  assert.deepEqual(await page.locator('dl.facts dd').allTextContents(), [app.name, 'Dev (dev@example.com)', expected.product]);
  assert.deepEqual(await page.locator('ul.scopes li').allTextContents(), expected.scopes);
}

/** The requests the app got at its redirect URI (the browser also asks the app's site for a favicon). */
const landings = () => appSite.received.filter((r) => r.url.startsWith('/callback?'));

/** Does `action`; the browser lands at the app's redirect URI: the URL the app received. */
async function landAtApp(page: Page, action: () => Promise<unknown>): Promise<URL> {
  const before = landings().length;
  await action();
  await page.waitForURL(`${redirectUri()}?**`);
  assert.equal(landings().length, before + 1);
  const landing = landings().at(-1)!;
  // The gateway's pages hold their transaction in their URL: it reaches the app in no Referer.
  assert.equal(landing.headers.referer, undefined);
  return new URL(landing.url, appSite.url);
}

const decide = (page: Page, decision: 'Allow' | 'Deny') => landAtApp(page, () => page.click(`button:has-text("${decision}")`));

/** At phone width: no sideways scrolling, and each of these buttons within the width. */
async function assertFitsPhone(page: Page, buttons: readonly string[]): Promise<void> {
  const [scrollWidth, innerWidth] = await page.evaluate<[number, number]>('[document.documentElement.scrollWidth, window.innerWidth]');
  assert.equal(innerWidth, PHONE.width);
  assert.ok(scrollWidth <= innerWidth, `${page.url()}: no sideways scrolling (the page is ${scrollWidth}px wide)`);
  for (const name of buttons) {
    const button = page.getByRole('button', { name, exact: true });
    assert.ok(await button.isVisible(), `the button ${name} is visible`);
    const box = (await button.boundingBox())!;
    assert.ok(box.x >= 0 && box.x + box.width <= innerWidth, `the button ${name} (${box.x}–${box.x + box.width}) is within ${innerWidth}px`);
  }
}

/** The code exchanged by openid-client, the token used at /v1/me, then refreshed and used again. */
async function assertTokensWork(app: TestApp, back: URL, asked: { verifier: string; state: string }, subject: string): Promise<void> {
  const tokens = await client.authorizationCodeGrant(app.config, back, { pkceCodeVerifier: asked.verifier, expectedState: asked.state });
  assert.equal(tokens.token_type, 'bearer');
  assert.match(tokens.refresh_token!, /^gwr/);
  const me = await call(`${gw.url}/v1/me`, { headers: bearer(tokens.access_token) });
  assert.equal(me.status, 200, me.text);
  assert.equal(upstream.received.at(-1)!.headers['x-gateway-subject'], subject);
  const refreshed = await client.refreshTokenGrant(app.config, tokens.refresh_token!);
  assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
  assert.equal((await call(`${gw.url}/v1/me`, { headers: bearer(refreshed.access_token) })).status, 200);
  assert.equal(upstream.received.at(-1)!.headers['x-gateway-subject'], subject);
}

describe('the app is openid-client, the user logs in at oidc-provider', { skip: missing }, () => {
  for (const type of ['confidential', 'public'] as const) {
    test(`a ${type} app: login at the provider, consent at the gateway, code, tokens, /v1/me as the provider's subject, refresh; again in that browser, the code at once`, async () => {
      const app = await registerApp('people', type);
      const context = await newContext();
      const page = await context.newPage();
      const asked = await authorization(app);
      await page.goto(asked.url.href);
      await logInAtProvider(page, 'alice');
      await assertConsentPage(page, app, { scopes: ['profile', 'email'], subject: 'alice', product: 'people' });
      const back = await decide(page, 'Allow');
      assert.equal(back.searchParams.get('iss'), gw.issuer);
      await assertTokensWork(app, back, asked, 'alice');

      // Again in this browser: signed in at the provider, the scopes granted at the gateway: no page, the code at once.
      const again = await authorization(app, 'profile');
      const code = await landAtApp(page, () => page.goto(again.url.href));
      assert.deepEqual([...code.searchParams.keys()], ['code', 'state', 'iss']);
      await assertTokensWork(app, code, again, 'alice');
      await context.close();
    });
  }
});

describe('pushed authorization requests (RFC 9126) with openid-client', { skip: missing }, () => {
  for (const type of ['confidential', 'public'] as const) {
    test(`a ${type} app: buildAuthorizationUrlWithPAR, a request_uri, then login, consent and tokens; a plain request is refused at the redirect URI`, async () => {
      const app = await registerApp('pushed', type);
      const context = await newContext();
      const page = await context.newPage();
      const { params, ...asked } = await authorizationParams('profile');
      const url = await client.buildAuthorizationUrlWithPAR(app.config, params);
      assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
      assert.match(url.searchParams.get('request_uri')!, /^urn:ietf:params:oauth:request_uri:/);
      await page.goto(url.href);
      await logInAtProvider(page, 'bob');
      await assertConsentPage(page, app, { scopes: ['profile'], subject: 'bob', product: 'pushed' });
      await assertTokensWork(app, await decide(page, 'Allow'), asked, 'bob');

      const plain = await authorization(app, 'profile');
      const refused = await landAtApp(page, () => page.goto(plain.url.href));
      assert.deepEqual(Object.fromEntries(refused.searchParams), {
        error: 'invalid_request',
        error_description: 'this app must push its authorization requests to /oauth2/par first (RFC 9126)',
        state: plain.state,
        iss: gw.issuer,
      });
      await context.close();
    });
  }
});

describe("the gateway's own login page, for an authorization server's users", { skip: missing }, () => {
  test('without JavaScript, at phone width: a wrong password, then login, consent, code and tokens; no page scrolls sideways, even for names of one long word', async () => {
    const app = await registerApp('local', 'confidential', LONG_NAME);
    const context = await newContext({ javaScriptEnabled: false, viewport: PHONE });
    const page = await context.newPage();
    const asked = await authorization(app, 'profile');
    await page.goto(asked.url.href);
    await page.waitForURL(`${gw.issuer}/oauth2/login?tx=*`);
    assert.equal(await page.locator('main p strong').textContent(), app.name);
    await assertFitsPhone(page, ['Sign in']);
    await page.fill('input[name=username]', 'carol');
    await page.fill('input[name=password]', 'not her password');
    const wrong = await Promise.all([page.waitForResponse(`${gw.issuer}/oauth2/login?tx=*`), page.click('button:has-text("Sign in")')]);
    assert.equal(wrong[0].status(), 401);
    assert.equal(await page.locator('p.error').textContent(), 'Wrong username or password.');
    assert.equal(await page.inputValue('input[name=username]'), 'carol');
    await assertFitsPhone(page, ['Sign in']);
    await page.fill('input[name=password]', 'c4rol-password');
    await page.click('button:has-text("Sign in")');
    await assertConsentPage(page, app, { scopes: ['profile'], subject: CAROL, product: 'local' });
    await assertFitsPhone(page, ['Allow', 'Deny']);
    await assertTokensWork(app, await decide(page, 'Allow'), asked, CAROL);
    await context.close();
  });
});

describe('refusals, as the app sees them', { skip: missing }, () => {
  test('a denied consent: the app gets access_denied with its state and the issuer, and openid-client reports it', async () => {
    const app = await registerApp('people');
    const context = await newContext();
    const page = await context.newPage();
    const asked = await authorization(app);
    await page.goto(asked.url.href);
    await logInAtProvider(page, 'alice');
    await assertConsentPage(page, app, { scopes: ['profile', 'email'], subject: 'alice', product: 'people' });
    const back = await decide(page, 'Deny');
    assert.deepEqual(Object.fromEntries(back.searchParams), { error: 'access_denied', error_description: 'the user denied the request', state: asked.state, iss: gw.issuer });
    await assert.rejects(client.authorizationCodeGrant(app.config, back, { pkceCodeVerifier: asked.verifier, expectedState: asked.state }), (err: unknown) => {
      assert.ok(err instanceof client.AuthorizationResponseError);
      assert.equal(err.error, 'access_denied');
      return true;
    });
    await context.close();
  });

  test('the user cancels at the provider (access_denied from it): the app gets access_denied', async () => {
    const app = await registerApp('people');
    const context = await newContext();
    const page = await context.newPage();
    const asked = await authorization(app);
    await page.goto(asked.url.href);
    await page.waitForURL(`${idp.issuer}/interaction/**`);
    const back = await landAtApp(page, () => page.click('text=[ Cancel ]'));
    assert.deepEqual(Object.fromEntries(back.searchParams), { error: 'access_denied', error_description: 'the user did not sign in', state: asked.state, iss: gw.issuer });
    await context.close();
  });
});

describe('the provider failing: the user gets a page that says so, never a 500', { skip: missing }, () => {
  test('the provider answers temporarily_unavailable: a 503 page saying the sign-in service cannot be reached', async () => {
    const app = await registerApp('people');
    const context = await newContext();
    const page = await context.newPage();
    await page.goto((await authorization(app)).url.href);
    await page.waitForURL(`${idp.issuer}/interaction/**`);
    const answer = page.waitForResponse(`${gw.issuer}/oauth2/callback?**`);
    await page.goto(`${page.url()}/unavailable`);
    assert.equal((await answer).status(), 503);
    assert.equal(await page.locator('h1').textContent(), 'Sign-in unavailable');
    assert.match((await page.locator('main').textContent())!, /The sign-in service cannot be reached right now\./);
    await context.close();
  });

  for (const [product, how] of [
    ['offline', 'down (connections refused)'],
    ['silent', 'hanging (no answer within its timeout)'],
  ] as const) {
    test(`the provider ${how} at its first login: a 503 page saying the sign-in service cannot be reached, at phone width`, async () => {
      const app = await registerApp(product);
      const context = await newContext({ javaScriptEnabled: false, viewport: PHONE });
      const page = await context.newPage();
      const before = landings().length;
      const answer = (await page.goto((await authorization(app, 'profile')).url.href))!;
      assert.equal(answer.status(), 503);
      assert.equal(answer.headers()['retry-after'], '30');
      assert.equal(page.url().split('?')[0], `${gw.issuer}/oauth2/authorize`);
      assert.equal(await page.locator('h1').textContent(), 'Sign-in unavailable');
      assert.match((await page.locator('main').textContent())!, /The sign-in service cannot be reached right now\. Try again in a few minutes\./);
      await assertFitsPhone(page, []);
      assert.equal(landings().length, before);
      await context.close();
    });
  }

  test('the provider down between the login and its code reaching the gateway: a 503 page, the code exchange having failed', async () => {
    const app = await registerApp('flaky');
    const context = await newContext();
    const page = await context.newPage();
    await page.goto((await authorization(app, 'profile')).url.href);
    // The gateway discovered the provider at this login. The login form's answer (its redirects to
    // the gateway's callback) is followed here, then the provider goes down and the browser is sent
    // on: Playwright routes no redirect of a request, so the callback itself cannot be held.
    await page.route(`${flaky.issuer}/interaction/*`, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const login = await route.fetch({ maxRedirects: 0 });
      const resume = await context.request.get(new URL(login.headers().location!, flaky.issuer).href, { maxRedirects: 0 });
      const callback = resume.headers().location!;
      assert.match(callback, new RegExp(`^${gw.issuer}/oauth2/callback\\?code=`));
      await flaky.close();
      await route.fulfill({ status: 303, headers: { location: callback } });
    });
    const answer = page.waitForResponse(`${gw.issuer}/oauth2/callback?**`);
    await logInAtProvider(page, 'alice', flaky);
    assert.equal((await answer).status(), 503);
    assert.equal(await page.locator('h1').textContent(), 'Sign-in unavailable');
    assert.match((await page.locator('main').textContent())!, /The sign-in service cannot be reached right now\./);
    await context.close();
  });
});

describe('subjectClaim', { skip: missing }, () => {
  test('subjectClaim employee_id: the consent names the employee id, and the upstream gets it as the subject', async () => {
    const app = await registerApp('staff');
    const context = await newContext();
    const page = await context.newPage();
    const asked = await authorization(app, 'profile');
    await page.goto(asked.url.href);
    await logInAtProvider(page, 'alice');
    await assertConsentPage(page, app, { scopes: ['profile'], subject: 'E-1001', product: 'staff' });
    await assertTokensWork(app, await decide(page, 'Allow'), asked, 'E-1001');
    await context.close();
  });
});
