// Apps and their keys: one set of operations for operators (`gateway admin apps|keys`) and portal
// developers alike. A developer reaches only their own apps (another's is as unknown as one that
// does not exist), and may not do what only an operator may: register beyond the portal's limit,
// skip the product's approval, or change an app an operator disabled.
import { randomBytes } from 'node:crypto';
import { newKey, newSecret, secretHash } from '../crypto.ts';
import type { ProductSettings } from '../config/load.ts';
import { StoreError, type App, type Approval, type ClientType, type Credential, type Developer } from '../store/port/index.ts';
import { requireRedirectUris, requireTypeFits } from './app-rules.ts';
import { audit } from './audit.ts';
import { asCaller, asOperator, isDeveloper, ofApp, type AdminDeps, type CallerDeps, type DeveloperDeps, type OperatorDeps } from './deps.ts';
import { requireActiveDeveloper, requireDeveloper, requireSessionDeveloper } from './developers.ts';
import { AdminError } from './errors.ts';
import { normaliseEmail, requireName } from './inputs.ts';
import { isReserved } from './management-clients.ts';

/** A confidential app's secret: shown once, only its keyed hash is stored. A public app has none. */
export type SecretOf<T extends ClientType> = T extends 'public' ? undefined : string;

export interface CreatedApp<T extends ClientType = ClientType> {
  app: App;
  key: string;
  secret: SecretOf<T>;
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

/**
 * A new credential's secret, and the keyed hash the store keeps. A public app has none: its hash
 * is of 32 random bytes thrown away at once, so that no secret ever matches it.
 */
function newCredentialSecret(deps: AdminDeps, type: ClientType): { secret: string | undefined; hash: Buffer } {
  if (type === 'public') return { secret: undefined, hash: secretHash(deps.secretKey, randomBytes(32).toString('base64url')) };
  const secret = newSecret();
  return { secret, hash: secretHash(deps.secretKey, secret) };
}

interface InsertOptions {
  approval: Approval;
  maxApps?: number;
  type: ClientType;
  redirectUris: readonly string[];
}

/** Inserts the app with a new key (and secret, if confidential); the store refuses a taken name, or an app beyond `maxApps`. */
async function insertApp(deps: AdminDeps, dev: Developer, name: string, product: ProductSettings, options: InsertOptions): Promise<CreatedApp> {
  const key = newKey();
  const { secret, hash } = newCredentialSecret(deps, options.type);
  try {
    const app = await deps.store.apps.createApp({
      developerId: dev.id,
      name,
      product: product.name,
      key,
      secretHash: hash,
      now: deps.clock(),
      approval: options.approval,
      type: options.type,
      redirectUris: options.redirectUris,
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

/** What registers an app: confidential unless `type` says otherwise, with the redirect URIs its product asks for. */
export interface NewAppInput<T extends ClientType = ClientType> {
  developer: string;
  name: string;
  product: string;
  type?: T | undefined;
  redirectUris?: readonly string[] | undefined;
}

/**
 * Registers an app for `developer`. An operator's is approved at once, whatever the product's
 * approval, and not bound by the portal's limit. A developer's own: at most
 * portal.maxAppsPerDeveloper of them, never under the name of an app an operator disabled (a new
 * app would stand in for it), and pending an operator's approval when the product's approval is
 * manual. A public app gets a key and no secret.
 */
export async function createApp<T extends ClientType = 'confidential'>(deps: CallerDeps, input: NewAppInput<T>): Promise<CreatedApp<T>> {
  const product = requireProduct(deps, input.product);
  const name = requireName(input.name, 'the app name');
  const type = input.type ?? 'confidential';
  requireTypeFits(product, type);
  const redirectUris = requireRedirectUris(product, input.redirectUris ?? [], type);
  let created: CreatedApp;
  if (!isDeveloper(deps)) {
    created = await insertApp(deps, await requireActiveDeveloper(deps, input.developer), name, product, { approval: 'approved', type, redirectUris });
  } else {
    requireSelf(deps, input.developer);
    const dev = await requireSessionDeveloper(deps, deps.developer);
    const held = await deps.store.apps.findApp(dev.email, name);
    if (held?.status === 'disabled') throw disabledApp(held);
    const approval = product.approval === 'manual' ? 'pending' : 'approved';
    created = await insertApp(deps, dev, name, product, { approval, maxApps: deps.portal.maxAppsPerDeveloper, type, redirectUris });
  }
  const { app, key } = created;
  audit(deps.logger, 'app.register', { actor: asCaller(deps), ...ofApp(app), key, approval: app.approval, redirectUris: app.redirectUris });
  // The secret is there exactly when the type asked for is confidential.
  return created as CreatedApp<T>;
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
export async function requireChangeable(deps: DeveloperDeps, app: App): Promise<void> {
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

/** A new key and secret (a public app: a key only) for the app; the earlier ones keep working for the configured overlap, then stop. */
export async function rotateKey(deps: CallerDeps, ref: AppRef): Promise<RotatedKey> {
  const app = await findApp(deps, ref);
  if (isDeveloper(deps)) await requireChangeable(deps, app);
  const now = deps.clock();
  const overlapUntil = now + deps.keyOverlapMs;
  const key = newKey();
  const { secret, hash } = newCredentialSecret(deps, app.type);
  // False: deleted since it was read (a DELETE racing this rotation).
  if (!(await deps.store.apps.rotateCredential({ appId: app.id, key, secretHash: hash, now, overlapUntil }))) {
    throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
  }
  audit(deps.logger, 'key.rotate', { actor: asCaller(deps), ...ofApp(app), key, overlapUntil });
  // The app without its keys as they were before the rotation.
  const { credentials: _before, ...rotated } = app;
  return { app: rotated, key, secret, overlapUntil };
}

/**
 * Replaces the app's redirect URIs, as its product's grants ask (./app-rules.ts). A developer may
 * not change an app an operator disabled.
 */
export async function setRedirectUris(deps: CallerDeps, ref: AppRef, uris: readonly string[]): Promise<AppDetails> {
  const app = await findApp(deps, ref);
  if (isDeveloper(deps)) await requireChangeable(deps, app);
  const redirectUris = requireRedirectUris(requireProduct(deps, app.product), uris, app.type);
  const updated = await deps.store.apps.setRedirectUris(app.id, redirectUris, deps.clock());
  // Deleted since it was read (a DELETE racing this change).
  if (updated === undefined) throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
  audit(deps.logger, 'app.redirect_uris', { actor: asCaller(deps), ...ofApp(updated), redirectUris: updated.redirectUris });
  return { ...updated, credentials: app.credentials };
}

/** Revoking a key stops token issuance with it and invalidates the tokens issued through it; to a developer, another's key is as unknown as one that does not exist. */
export async function revokeKey(deps: CallerDeps, key: string): Promise<void> {
  const app = await deps.store.apps.findAppByKey(key);
  if (app === undefined || isReserved(app) || (isDeveloper(deps) && app.developerId !== deps.developer.id)) throw new AdminError('unknown_key', `no key ${key}`);
  if (!(await deps.store.apps.revokeCredential(key, deps.clock()))) throw new AdminError('already_revoked', `key ${key} is already revoked`);
  audit(deps.logger, 'key.revoke', { actor: asCaller(deps), ...ofApp(app), key });
}
