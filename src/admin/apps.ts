// Apps and their keys: one set of operations for operators (`gateway admin apps|keys`) and portal
// developers alike. A developer reaches only their own apps (another's is as unknown as one that
// does not exist), and may not do what only an operator may: register beyond the portal's limit,
// skip the product's approval, or change an app an operator disabled.
import { newKey, newSecret, secretHash } from '../crypto.ts';
import type { ProductSettings } from '../config/load.ts';
import { StoreError, type App, type Approval, type Credential, type Developer } from '../store/port/index.ts';
import { audit } from './audit.ts';
import { asCaller, asDeveloper, asOperator, isDeveloper, ofApp, type AdminDeps, type CallerDeps, type DeveloperDeps, type OperatorDeps } from './deps.ts';
import { requireActiveDeveloper, requireDeveloper, requireSessionDeveloper } from './developers.ts';
import { AdminError } from './errors.ts';
import { normaliseEmail, requireName } from './inputs.ts';
import { isReserved } from './management-clients.ts';

export interface CreatedApp {
  app: App;
  key: string;
  /** Shown once; only its keyed hash is stored. */
  secret: string;
}

export interface AppDetails extends App {
  credentials: Credential[];
}

export interface RotatedKey extends CreatedApp {
  /** Until when (epoch ms) the app's earlier keys keep working. */
  overlapUntil: number;
}

/** An app by one of its keys, by its developer and name, or by its id (the portal's pages). */
export type AppRef = { key: string } | { developer: string; name: string } | { id: string };

function requireProduct(deps: AdminDeps, name: string): ProductSettings {
  const product = deps.products.get(name);
  if (product === undefined) {
    const known = [...deps.products.keys()].join(', ');
    throw new AdminError('unknown_product', `no API product "${name}" (known: ${known})`);
  }
  return product;
}

const disabledApp = (app: App) => new AdminError('app_disabled', `the app "${app.name}" was disabled by the API team: it cannot be deleted or replaced here; ask the API team about it`);

/** Inserts the app with a new key and secret; the store refuses a taken name, or an app beyond `maxApps`. */
async function insertApp(deps: AdminDeps, dev: Developer, name: string, product: ProductSettings, options: { approval: Approval; maxApps?: number }): Promise<CreatedApp> {
  const key = newKey();
  const secret = newSecret();
  try {
    const app = await deps.store.apps.createApp({
      developerId: dev.id,
      name,
      product: product.name,
      key,
      secretHash: secretHash(deps.secretKey, secret),
      now: deps.clock(),
      approval: options.approval,
      ...(options.maxApps === undefined ? {} : { maxAppsOfDeveloper: options.maxApps }),
    });
    return { app, key, secret };
  } catch (err) {
    // Deleted since it was read (a DELETE racing this registration): whatever the store said of it.
    if ((await deps.store.accounts.findDeveloperById(dev.id)) === undefined) throw new AdminError('unknown_developer', `no developer ${dev.email}`);
    if (err instanceof StoreError && err.code === 'conflict') {
      throw new AdminError('duplicate_app', `developer ${dev.email} already has an app named "${name}"`);
    }
    if (err instanceof StoreError && err.code === 'limit') {
      throw new AdminError('too_many_apps', `you already have ${options.maxApps} apps, the most the portal allows: delete one first`);
    }
    throw err;
  }
}

/** A developer acts for themself only: another developer's address is as unknown as one without an account. */
function requireSelf(deps: DeveloperDeps, email: string): void {
  if (normaliseEmail(email) !== deps.developer.email) throw new AdminError('unknown_developer', `no developer ${email.trim().toLowerCase()}`);
}

/**
 * Registers an app for `developer`. An operator's is approved at once, whatever the product's
 * approval, and not bound by the portal's limit. A developer's own: at most
 * portal.maxAppsPerDeveloper of them, never under the name of an app an operator disabled (a new
 * app would stand in for it), and pending an operator's approval when the product's approval is manual.
 */
export async function createApp(deps: CallerDeps, input: { developer: string; name: string; product: string }): Promise<CreatedApp> {
  const product = requireProduct(deps, input.product);
  const name = requireName(input.name, 'the app name');
  if (!isDeveloper(deps)) {
    const created = await insertApp(deps, await requireActiveDeveloper(deps, input.developer), name, product, { approval: 'approved' });
    audit(deps.logger, 'app.register', { actor: asOperator(deps), ...ofApp(created.app), key: created.key, approval: created.app.approval });
    return created;
  }
  requireSelf(deps, input.developer);
  const dev = await requireSessionDeveloper(deps, deps.developer);
  const held = await deps.store.apps.findApp(dev.email, name);
  if (held?.status === 'disabled') throw disabledApp(held);
  const approval = product.approval === 'manual' ? 'pending' : 'approved';
  const created = await insertApp(deps, dev, name, product, { approval, maxApps: deps.portal.maxAppsPerDeveloper });
  audit(deps.logger, 'app.register', { actor: asDeveloper(dev), ...ofApp(created.app), key: created.key, approval: created.app.approval });
  return created;
}

/** Apps, each with its keys (`show`, `disable` and `revoke` take a key): all, or one developer's; a developer's own. */
export async function listApps(deps: CallerDeps, filter: { developer?: string } = {}): Promise<AppDetails[]> {
  if (isDeveloper(deps)) {
    if (filter.developer !== undefined) requireSelf(deps, filter.developer);
    // The session's developer, not looked up again: a listing changes nothing.
    return withCredentials(deps, await deps.store.apps.listApps({ developerEmail: deps.developer.email }));
  }
  if (filter.developer === undefined)
    return withCredentials(
      deps,
      (await deps.store.apps.listApps()).filter((app) => !isReserved(app)),
    );
  const dev = await requireDeveloper(deps, filter.developer);
  return withCredentials(deps, await deps.store.apps.listApps({ developerEmail: dev.email }));
}

function withCredentials(deps: AdminDeps, apps: readonly App[]): Promise<AppDetails[]> {
  return Promise.all(apps.map(async (app) => ({ ...app, credentials: await deps.store.apps.listCredentials(app.id) })));
}

/** An app with its keys; to a developer, another developer's is as unknown as one that does not exist. */
export async function findApp(deps: CallerDeps, ref: AppRef): Promise<AppDetails> {
  const { apps } = deps.store;
  const app = 'key' in ref ? await apps.findAppByKey(ref.key) : 'id' in ref ? await apps.findAppById(ref.id) : await apps.findApp(normaliseEmail(ref.developer), ref.name);
  if (app === undefined || isReserved(app) || (isDeveloper(deps) && app.developerId !== deps.developer.id)) {
    throw new AdminError('unknown_app', 'key' in ref ? `no app with key ${ref.key}` : 'id' in ref ? 'there is no such app' : `developer ${ref.developer} has no app "${ref.name}"`);
  }
  return { ...app, credentials: await apps.listCredentials(app.id) };
}

/**
 * What a developer may not change: an app an operator disabled, nor any app of a disabled developer
 * (a rotation would set the working key to expire; a deletion would erase what the operator stopped:
 * its tokens, usage and counts).
 */
async function requireChangeable(deps: DeveloperDeps, app: App): Promise<void> {
  if (app.status === 'disabled') throw disabledApp(app);
  await requireSessionDeveloper(deps, deps.developer);
}

/** Disabling an app stops token issuance and invalidates its tokens at once. */
export async function setAppStatus(deps: OperatorDeps, ref: AppRef, status: App['status']): Promise<AppDetails> {
  const app = await findApp(deps, ref);
  const updated = await deps.store.apps.setAppStatus(app.id, status, deps.clock());
  audit(deps.logger, status === 'disabled' ? 'app.disable' : 'app.enable', { actor: asOperator(deps), ...ofApp(app) });
  return { ...(updated ?? app), credentials: app.credentials };
}

/** An operator lets an app registered in the portal use its keys (idempotent). */
export async function approveApp(deps: OperatorDeps, ref: AppRef): Promise<AppDetails> {
  const app = await findApp(deps, ref);
  const updated = await deps.store.apps.setAppApproval(app.id, 'approved', deps.clock());
  audit(deps.logger, 'app.approve', { actor: asOperator(deps), ...ofApp(app) });
  return { ...(updated ?? app), credentials: app.credentials };
}

/** Deletes the app with its keys; its tokens stop working at once. */
export async function deleteApp(deps: CallerDeps, ref: AppRef): Promise<App> {
  const app = await findApp(deps, ref);
  if (!isDeveloper(deps)) {
    if (!(await deps.store.apps.deleteApp(app.id, deps.clock()))) throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
  } else {
    await requireChangeable(deps, app);
    // Checked again in the store's transaction, in case an operator disables it meanwhile.
    if (!(await deps.store.apps.deleteApp(app.id, deps.clock(), { onlyIfActive: true }))) {
      const now = await deps.store.apps.findAppById(app.id);
      if (now === undefined) throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
      if (now.status === 'disabled') throw disabledApp(now);
      throw new AdminError('developer_disabled', `developer ${deps.developer.email} is disabled`);
    }
  }
  audit(deps.logger, 'app.delete', { actor: asCaller(deps), ...ofApp(app) });
  return app;
}

/** A new key and secret for the app; the earlier ones keep working for the configured overlap, then stop. */
export async function rotateKey(deps: CallerDeps, ref: AppRef): Promise<RotatedKey> {
  const app = await findApp(deps, ref);
  if (isDeveloper(deps)) await requireChangeable(deps, app);
  const now = deps.clock();
  const overlapUntil = now + deps.keyOverlapMs;
  const key = newKey();
  const secret = newSecret();
  // False: deleted since it was read (a DELETE racing this rotation).
  if (!(await deps.store.apps.rotateCredential({ appId: app.id, key, secretHash: secretHash(deps.secretKey, secret), now, overlapUntil }))) {
    throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
  }
  audit(deps.logger, 'key.rotate', { actor: asCaller(deps), ...ofApp(app), key, overlapUntil });
  // The app without its keys as they were before the rotation.
  const { credentials: _before, ...rotated } = app;
  return { app: rotated, key, secret, overlapUntil };
}

/** Revoking a key stops token issuance with it and invalidates the tokens issued through it; to a developer, another's key is as unknown as one that does not exist. */
export async function revokeKey(deps: CallerDeps, key: string): Promise<void> {
  const app = await deps.store.apps.findAppByKey(key);
  if (app === undefined || isReserved(app) || (isDeveloper(deps) && app.developerId !== deps.developer.id)) throw new AdminError('unknown_key', `no key ${key}`);
  if (!(await deps.store.apps.revokeCredential(key, deps.clock()))) throw new AdminError('already_revoked', `key ${key} is already revoked`);
  audit(deps.logger, 'key.revoke', { actor: asCaller(deps), ...ofApp(app), key });
}
