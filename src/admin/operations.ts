// Operations on developers, apps and keys, shared by `gateway admin` and the developer portal.
import { newKey, newSecret, secretHash } from '../crypto.ts';
import type { Deps } from '../deps.ts';
import { StoreError, type App, type Credential, type Developer } from '../store/port.ts';

export type AdminDeps = Pick<Deps, 'config' | 'store' | 'secretKey' | 'clock'>;

export class AdminError extends Error {
  override readonly name = 'AdminError';
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function normaliseEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 254) throw new AdminError('invalid_email', `"${email}" is not an email address`);
  return e;
}

function requireName(value: string, what: string): string {
  const name = value.trim();
  if (name === '' || name.length > 100 || /[\x00-\x1f\x7f]/.test(name)) {
    throw new AdminError('invalid_name', `${what} must be 1 to 100 printable characters`);
  }
  return name;
}

export async function createDeveloper(deps: AdminDeps, input: { email: string; name: string }): Promise<Developer> {
  const email = normaliseEmail(input.email);
  const name = requireName(input.name, 'the developer name');
  try {
    return await deps.store.createDeveloper({ email, name, now: deps.clock() });
  } catch (err) {
    if (err instanceof StoreError && err.code === 'conflict') throw new AdminError('duplicate_developer', `developer ${email} already exists`);
    throw err;
  }
}

export async function listDevelopers(deps: AdminDeps): Promise<Developer[]> {
  return deps.store.listDevelopers();
}

async function requireDeveloper(deps: AdminDeps, email: string): Promise<Developer> {
  const dev = await deps.store.findDeveloper(normaliseEmail(email));
  if (dev === undefined) throw new AdminError('unknown_developer', `no developer ${email.trim().toLowerCase()}`);
  return dev;
}

/** Disabling a developer stops token issuance to their apps and invalidates the tokens they hold. */
export async function setDeveloperStatus(deps: AdminDeps, email: string, status: Developer['status']): Promise<Developer> {
  const dev = await requireDeveloper(deps, email);
  return (await deps.store.setDeveloperStatus(dev.email, status))!;
}

export interface CreatedApp {
  app: App;
  key: string;
  /** Shown once; only its keyed hash is stored. */
  secret: string;
}

export async function createApp(deps: AdminDeps, input: { developer: string; name: string; product: string }): Promise<CreatedApp> {
  const product = deps.config.products.get(input.product);
  if (product === undefined) {
    const known = [...deps.config.products.keys()].join(', ');
    throw new AdminError('unknown_product', `no API product "${input.product}" (known: ${known})`);
  }
  const name = requireName(input.name, 'the app name');
  const dev = await requireDeveloper(deps, input.developer);
  if (dev.status !== 'active') throw new AdminError('developer_disabled', `developer ${dev.email} is disabled`);
  const key = newKey();
  const secret = newSecret();
  try {
    const app = await deps.store.createApp({
      developerId: dev.id,
      name,
      product: product.name,
      key,
      secretHash: secretHash(deps.secretKey, secret),
      now: deps.clock(),
    });
    return { app, key, secret };
  } catch (err) {
    if (err instanceof StoreError && err.code === 'conflict') {
      throw new AdminError('duplicate_app', `developer ${dev.email} already has an app named "${name}"`);
    }
    throw err;
  }
}

export interface AppDetails extends App {
  credentials: Credential[];
}

export async function listApps(deps: AdminDeps, filter: { developer?: string } = {}): Promise<App[]> {
  if (filter.developer === undefined) return deps.store.listApps();
  const dev = await requireDeveloper(deps, filter.developer);
  return deps.store.listApps({ developerEmail: dev.email });
}

/** An app by its key, or by developer and name. */
export async function findApp(deps: AdminDeps, ref: { key: string } | { developer: string; name: string }): Promise<AppDetails> {
  const app = 'key' in ref ? await deps.store.findAppByKey(ref.key) : await deps.store.findApp(normaliseEmail(ref.developer), ref.name);
  if (app === undefined) {
    throw new AdminError('unknown_app', 'key' in ref ? `no app with key ${ref.key}` : `developer ${ref.developer} has no app "${ref.name}"`);
  }
  return { ...app, credentials: await deps.store.listCredentials(app.id) };
}

/** Disabling an app stops token issuance and invalidates its tokens at once. */
export async function setAppStatus(deps: AdminDeps, ref: { key: string } | { developer: string; name: string }, status: App['status']): Promise<AppDetails> {
  const app = await findApp(deps, ref);
  const updated = await deps.store.setAppStatus(app.id, status);
  return { ...(updated ?? app), credentials: app.credentials };
}

/** Revoking a key stops token issuance with it and invalidates the tokens issued through it. */
export async function revokeKey(deps: AdminDeps, key: string): Promise<void> {
  if (!(await deps.store.revokeCredential(key))) {
    const app = await deps.store.findAppByKey(key);
    throw new AdminError(app === undefined ? 'unknown_key' : 'already_revoked', app === undefined ? `no key ${key}` : `key ${key} is already revoked`);
  }
}
