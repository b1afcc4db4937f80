// A developer's apps: the list, registering one, an app's page with its usage and its analytics, and its actions
// (rotate the key, revoke a key, replace the redirect URIs, add or remove a client certificate,
// delete), each through src/admin as the developer.
import { PRIVATE_KEY, setCertificateAuth } from '../admin/app-certificates.ts';
import { CLIENT_TYPES } from '../admin/app-rules.ts';
import { createApp, deleteApp, findApp, listApps, revokeKey, rotateKey, setRedirectUris, type AppDetails } from '../admin/apps.ts';
import { AdminError } from '../admin/errors.ts';
import { SUMMARY_WINDOWS, summarize, usageReport } from '../admin/usage.ts';
import { mutualTls } from '../http/client-certificate.ts';
import { quotaUsed } from '../policies/quota.ts';
import { isLive } from '../store/port/index.ts';
import { HOUR_MS } from '../usage.ts';
import { asDeveloper, developerOf, notFound, page, refused, visible, visibleProduct, type Answer, type PortalContext, type Request } from './context.ts';
import * as analyticsPages from './analytics-pages.ts';
import * as pages from './app-pages.ts';
import * as certificatePages from './certificate-pages.ts';
import type { Shown } from './reveal.ts';

const DAY_MS = 24 * HOUR_MS;

const NOTICES = new Map([
  ['verified', 'Your email address is confirmed: you can register apps.'],
  ['revoked', 'The key is revoked.'],
  ['deleted', 'The app is deleted; its tokens no longer work.'],
  ['redirect-uris', 'The redirect URIs are saved.'],
  ['certificate-first', 'The certificate is registered: the app now authenticates with it, no longer with its secret.'],
  ['certificate-added', 'The certificate is registered; the others still work.'],
  ['certificate-known', 'That certificate was registered already: nothing changed.'],
  ['certificate-removed', 'The certificate is removed.'],
  ['certificate-last', 'The certificate is removed: the app authenticates with its secret again.'],
]);
/** The notices an app's own page shows. */
const APP_NOTICES = new Set(['revoked', 'redirect-uris', 'certificate-first', 'certificate-added', 'certificate-known', 'certificate-removed', 'certificate-last']);

/** An app page's id, and its key's (in the order of the route patterns' groups). */
const ID = '(?<id>[A-Za-z0-9_-]{1,64})';
export const APP = new RegExp(`^/apps/${ID}$`);
export const APP_DELETE = new RegExp(`^/apps/${ID}/delete$`);
export const APP_SECRET = new RegExp(`^/apps/${ID}/secret$`);
export const APP_ANALYTICS = new RegExp(`^/apps/${ID}/analytics$`);
export const APP_ROTATE = new RegExp(`^/apps/${ID}/rotate$`);
export const APP_REDIRECT_URIS = new RegExp(`^/apps/${ID}/redirect-uris$`);
export const KEY_REVOKE = new RegExp(`^/apps/${ID}/keys/(?<key>[A-Za-z0-9]{1,64})/revoke$`);
export const APP_CERTIFICATES = new RegExp(`^/apps/${ID}/certificates$`);
/** A registered certificate, by its x5t#S256 (base64url of 32 bytes). */
export const CERTIFICATE_REMOVE = new RegExp(`^/apps/${ID}/certificates/(?<thumbprint>[A-Za-z0-9_-]{43})/remove$`);
/** Every path under an app, whichever the method: a developer's, so that a visitor is sent to log in. */
export const ANY_APP_PATH = new RegExp(`^/apps/${ID}(/delete|/rotate|/secret|/analytics|/redirect-uris|/keys/[A-Za-z0-9]{1,64}/revoke|/certificates|/certificates/[A-Za-z0-9_-]{43}/remove)?$`);

export async function appsPage(ctx: PortalContext, r: Request): Promise<Answer> {
  const { clock } = ctx.services;
  const rows = (await listApps(asDeveloper(ctx, r))).map((app) => {
    const live = app.credentials.filter((c) => isLive(c, clock()));
    return { app, key: live.at(-1)?.key, product: ctx.catalog().products.get(app.product) };
  });
  return page(200, pages.appsPage(r.frame, rows, NOTICES.get(r.query.get('done') ?? '')));
}

export const newAppPage = async (ctx: PortalContext, r: Request) => page(200, pages.newAppPage(r.frame, visible(ctx), r.query.has('product') ? { product: r.query.get('product')! } : {}));

export async function registerForm(ctx: PortalContext, r: Request): Promise<Answer> {
  const form = { name: r.form.get('name') ?? '', product: r.form.get('product') ?? '', type: r.form.get('type') ?? 'confidential', redirectUris: r.form.get('redirect_uris') ?? '' };
  const again = (error: string) => pages.newAppPage(r.frame, visible(ctx), { ...form, error });
  const product = visibleProduct(ctx, form.product);
  if (product === undefined) return page(400, again('choose one of the API products'));
  const type = CLIENT_TYPES.find((t) => t === form.type);
  if (type === undefined) return page(400, again('choose the type of the app: confidential or public'));
  try {
    const { app, key, secret } = await createApp(asDeveloper(ctx, r), {
      developer: developerOf(r).email,
      name: form.name,
      product: product.name,
      type,
      redirectUris: pages.redirectUrisOf(form.redirectUris),
    });
    return toReveal(ctx, r, app.id, { key, ...(secret === undefined ? {} : { secret }) });
  } catch (err) {
    return refused(err, again);
  }
}

/** The route's app, the developer's own; another developer's is as absent as an unknown one. */
async function ownApp(ctx: PortalContext, r: Request): Promise<AppDetails | undefined> {
  return findApp(asDeveloper(ctx, r), { id: r.params.id! }).catch((err: unknown) => {
    if (err instanceof AdminError && err.code === 'unknown_app') return undefined;
    throw err;
  });
}

/** A handler of one of the developer's apps: not found unless the route's app is theirs. */
const withApp =
  (handler: (ctx: PortalContext, r: Request, app: AppDetails) => Promise<Answer>) =>
  async (ctx: PortalContext, r: Request): Promise<Answer> => {
    const app = await ownApp(ctx, r);
    return app === undefined ? notFound(r) : handler(ctx, r, app);
  };

async function appView(ctx: PortalContext, app: AppDetails): Promise<pages.AppView> {
  const { clock, usage, store } = ctx.services;
  const now = clock();
  const product = ctx.catalog().products.get(app.product);
  await usage.flush();
  return {
    app,
    product,
    credentials: app.credentials,
    // The report starts at the hour that holds `now - 24 hours`: the hours the analytics' 24-hour window counts.
    usage: summarize(await usageReport({ store }, { from: now - DAY_MS, to: now, app: app.id })),
    quota:
      product?.quota === undefined
        ? undefined
        : { settings: product.quota, used: await quotaUsed(product.quota, 'product', store.counters, product.name, { appId: app.id, developerEmail: app.developerEmail }, now) },
    now,
    takesCertificates: mutualTls(ctx.catalog().listen),
  };
}

/**
 * Post/Redirect/Get: the POST that made a secret sends the browser to the page that shows it, so
 * that reloading that page repeats nothing. The secret goes along sealed in a cookie, never in the URL.
 */
const toReveal = (ctx: PortalContext, r: Request, appId: string, shown: Shown): Answer => ({ redirect: ctx.reveals.path(appId), cookies: [ctx.reveals.seal(r.visitor.id, appId, shown)] });

export const appPage = withApp(async (ctx, r, app) => {
  const done = r.query.get('done') ?? '';
  return page(200, pages.appPage(r.frame, await appView(ctx, app), { notice: APP_NOTICES.has(done) ? NOTICES.get(done) : undefined }));
});

/** The app's calls over each window of SUMMARY_WINDOWS, from one report of the longest; counts of this thread not yet saved are saved first. */
export const analyticsPage = withApp(async (ctx, r, app) => {
  const { clock, usage, store } = ctx.services;
  await usage.flush();
  const now = clock();
  const longest = Math.max(...SUMMARY_WINDOWS.map((w) => w.ms));
  const rows = await usageReport({ store }, { from: now - longest, to: now, app: app.id });
  return page(200, analyticsPages.analyticsPage(r.frame, app, analyticsPages.analyticsWindows(rows, now)));
});

export const deletePage = withApp(async (_ctx, r, app) => page(200, pages.deletePage(r.frame, app)));

/**
 * The new secret, once: this GET spends the sealed cookie in the store and clears it, so a
 * reload, another visit or the same cookie sent again finds it gone. A store that cannot spend
 * it throws (503), and the cookie stays for a try once the store answers.
 */
export const secretPage = withApp(async (ctx, r, app) => {
  const shown = await ctx.reveals.open(r.req, r.visitor.id, app.id);
  // After a rotation, the keys the overlap keeps working; none when the app's keys were all revoked before it.
  const previousWorks = app.credentials.some((c) => c.key !== shown?.key && isLive(c, ctx.services.clock()));
  const answer = shown === undefined ? page(410, pages.secretGonePage(r.frame, app)) : page(200, pages.secretPage(r.frame, { app, ...shown, previousWorks }));
  return { ...answer, cookies: [ctx.reveals.clear(app.id)] };
});

export const rotateForm = withApp(async (ctx, r, app) => {
  try {
    const { key, secret, overlapUntil } = await rotateKey(asDeveloper(ctx, r), { id: app.id });
    return toReveal(ctx, r, app.id, { key, ...(secret === undefined ? {} : { secret }), overlapUntil });
  } catch (err) {
    const view = await appView(ctx, app);
    return refused(err, (error) => pages.appPage(r.frame, view, { error }));
  }
});

/** Replaces the app's redirect URIs with the textarea's lines; refused, the form comes back as typed, the URI named. */
export const redirectUrisForm = withApp(async (ctx, r, app) => {
  const text = r.form.get('redirect_uris') ?? '';
  try {
    await setRedirectUris(asDeveloper(ctx, r), { id: app.id }, pages.redirectUrisOf(text));
  } catch (err) {
    const view = await appView(ctx, app);
    return refused(err, (error) => pages.appPage(r.frame, view, { redirectUris: { text, error } }));
  }
  return { redirect: `/apps/${app.id}?done=redirect-uris` };
});

/** Refusals of the certificate form that src/admin would not make: it does not know the listener, nor who registered a subject. */
const NO_MUTUAL_TLS = 'The gateway takes no client certificates at the moment: a certificate registered now would stop the app from getting tokens.';

/**
 * Registers the pasted certificate beside the app's others, given back as their thumbprints, so
 * that the app can move to a new one before the old is removed; refused, the form comes back as
 * typed, with why.
 */
export const certificateForm = withApp(async (ctx, r, app) => {
  const pasted = r.form.get('certificate') ?? '';
  // A private key pasted by mistake is not sent back to the browser.
  const text = PRIVATE_KEY.test(pasted) ? '' : pasted;
  const again = async (status: number, error: string) => page(status, pages.appPage(r.frame, await appView(ctx, app), { certificate: { text, error } }));
  if (!mutualTls(ctx.catalog().listen) && app.certificateAuth?.method !== 'tls_client_auth') return again(400, NO_MUTUAL_TLS);
  const kept = certificatePages.registeredCertificates(app).map((c) => c.thumbprint);
  let added: number;
  try {
    const updated = await setCertificateAuth(asDeveloper(ctx, r), { id: app.id }, { method: 'self_signed_tls_client_auth', certificates: [...kept, pasted] });
    added = certificatePages.registeredCertificates(updated).length - kept.length;
  } catch (err) {
    const view = await appView(ctx, app);
    return refused(err, (error) => pages.appPage(r.frame, view, { certificate: { text, error } }));
  }
  return { redirect: `/apps/${app.id}?done=${added === 0 ? 'certificate-known' : kept.length === 0 ? 'certificate-first' : 'certificate-added'}` };
});

/** The route's certificate among those the app registered; undefined for any other thumbprint. */
const routeCertificate = (r: Request, app: AppDetails) => certificatePages.registeredCertificates(app).find((c) => c.thumbprint === r.params.thumbprint);

export const removeCertificatePage = withApp(async (ctx, r, app) => {
  const certificate = routeCertificate(r, app);
  return certificate === undefined ? notFound(r) : page(200, certificatePages.removeCertificatePage(r.frame, app, certificate, ctx.services.clock()));
});

/** Registers the app's other certificates again, or none when it was the last: the secret authenticates again. */
export const removeCertificateForm = withApp(async (ctx, r, app) => {
  const certificate = routeCertificate(r, app);
  if (certificate === undefined) return notFound(r);
  const remaining = certificatePages
    .registeredCertificates(app)
    .filter((c) => c !== certificate)
    .map((c) => c.thumbprint);
  try {
    await setCertificateAuth(asDeveloper(ctx, r), { id: app.id }, remaining.length === 0 ? { method: 'none' } : { method: 'self_signed_tls_client_auth', certificates: remaining });
  } catch (err) {
    const view = await appView(ctx, app);
    return refused(err, (error) => pages.appPage(r.frame, view, { error }));
  }
  return { redirect: `/apps/${app.id}?done=${remaining.length === 0 ? 'certificate-last' : 'certificate-removed'}` };
});

export const deleteForm = withApp(async (ctx, r, app) => {
  try {
    await deleteApp(asDeveloper(ctx, r), { id: app.id });
  } catch (err) {
    const view = await appView(ctx, app);
    return refused(err, (error) => pages.appPage(r.frame, view, { error }));
  }
  return { redirect: '/apps?done=deleted' };
});

/** Asks first: GET shows what revoking the key leaves the app with, and a form that POSTs the revocation. */
export const revokePage = withApp(async (ctx, r, app) => {
  const credential = app.credentials.find((c) => c.key === r.params.key);
  if (credential === undefined) return notFound(r);
  const now = ctx.services.clock();
  const others = app.credentials.filter((c) => c !== credential && isLive(c, now)).length;
  return page(200, pages.revokeKeyPage(r.frame, app, credential, others));
});

export const revokeForm = withApp(async (ctx, r, app) => {
  const key = r.params.key!;
  if (!app.credentials.some((c) => c.key === key)) return notFound(r);
  await revokeKey(asDeveloper(ctx, r), key).catch((err: unknown) => {
    if (!(err instanceof AdminError && err.code === 'already_revoked')) throw err;
  });
  return { redirect: `/apps/${app.id}?done=revoked` };
});

/** The rest of an app's paths: nothing there, for its developer either (a visitor is sent to log in first). */
export const nothingHere = async (_ctx: PortalContext, r: Request) => notFound(r);
