// The management API's operations on apps, their keys and their tokens: each a thin call of
// src/admin, as `gateway admin apps|keys|tokens` is.
import { checkCertificateAuth, setCertificateAuth, type CertificateAuthInput } from '../admin/app-certificates.ts';
import { approveApp, createApp, deleteApp, findApp, listApps, revokeKey, rotateKey, setAppStatus, setRedirectUris, type AppDetails, type NewAppInput } from '../admin/apps.ts';
import { AdminError } from '../admin/errors.ts';
import { importKey, revokeTokens } from '../admin/keys.ts';
import type { App } from '../store/port/index.ts';
import { page, requireMatch, type Call, type ManagementOperation } from './call.ts';
import { developerOf } from './developers.ts';

const appOf = (call: Call) => findApp(call.deps, { id: call.params.app! });

/** The apps the list's filters select: a developer's, the one holding a key, then by product and name. */
async function selected(call: Call): Promise<AppDetails[]> {
  const { query, deps } = call;
  const key = query.get('key');
  const developer = query.get('developer');
  let apps: AppDetails[];
  if (key !== null) {
    apps = await findApp(deps, { key }).then(
      (app) => [app],
      (err: unknown) => {
        if (err instanceof AdminError && err.code === 'unknown_app') return [];
        throw err;
      },
    );
    if (developer !== null) apps = apps.filter((app) => app.developerId === developer || app.developerEmail === developer.toLowerCase());
  } else {
    apps = await listApps(deps, developer === null ? {} : { developer: (await developerOf(call, developer)).email });
  }
  const product = query.get('product');
  const name = query.get('name');
  return apps.filter((app) => (product === null || app.product === product) && (name === null || app.name === name));
}

export const appOperations: Record<string, ManagementOperation> = {
  async listApps(call) {
    return { status: 200, body: page(await selected(call), (app) => `${app.developerEmail}\u0000${app.name}`, call.query) };
  },
  async createApp(call) {
    const input = call.body as NewAppInput;
    const dev = await developerOf(call, input.developer);
    const created = await createApp(call.deps, { ...input, developer: dev.email });
    return { status: 201, body: { ...created.app, key: created.key, secret: created.secret }, headers: { location: `/v1/apps/${created.app.id}` } };
  },
  async getApp(call) {
    return { status: 200, body: await appOf(call), etag: true };
  },
  async updateApp(call) {
    const app = await appOf(call);
    requireMatch(call, app);
    const { status, approval, redirectUris, certificateAuth } = call.body as {
      status?: App['status'];
      approval?: 'approved';
      redirectUris?: string[];
      certificateAuth?: CertificateAuthInput;
    };
    // First: the changes that may be refused, checked before any is made, so that a refusal leaves the others unmade.
    if (certificateAuth !== undefined) checkCertificateAuth(call.deps, app, certificateAuth);
    if (redirectUris !== undefined) await setRedirectUris(call.deps, { id: app.id }, redirectUris);
    if (certificateAuth !== undefined) await setCertificateAuth(call.deps, { id: app.id }, certificateAuth);
    if (approval !== undefined) await approveApp(call.deps, { id: app.id });
    if (status !== undefined) await setAppStatus(call.deps, { id: app.id }, status);
    return { status: 200, body: await appOf(call), etag: true };
  },
  async deleteApp(call) {
    const app = await appOf(call);
    requireMatch(call, app);
    await deleteApp(call.deps, { id: app.id });
    return { status: 204 };
  },
  async listKeys(call) {
    return { status: 200, body: { items: (await appOf(call)).credentials, next: null } };
  },
  async rotateKey(call) {
    const rotated = await rotateKey(call.deps, { id: call.params.app! });
    return { status: 201, body: { ...rotated.app, key: rotated.key, secret: rotated.secret, overlapUntil: rotated.overlapUntil } };
  },
  async importKey(call) {
    const credential = await importKey(call.deps, { id: call.params.app! }, call.body as { key: string; secret: string });
    return { status: 201, body: credential };
  },
  async revokeKey(call) {
    const app = await appOf(call);
    const key = call.params.key!;
    // A key of another app is not this app's: as unknown here as one that does not exist.
    if (!app.credentials.some((c) => c.key === key)) throw new AdminError('unknown_key', `the app "${app.name}" has no key ${key}`);
    await revokeKey(call.deps, key);
    const credential = (await call.deps.store.apps.listCredentials(app.id)).find((c) => c.key === key);
    // Deleted since it was revoked (a DELETE racing this call).
    if (credential === undefined) throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
    return { status: 200, body: credential };
  },
  async revokeTokens(call) {
    const target = call.body as { app: string } | { subject: string };
    return { status: 200, body: await revokeTokens(call.deps, 'app' in target ? { app: { id: target.app } } : { subject: target.subject }) };
  },
};
