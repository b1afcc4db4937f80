// Management clients: the apps that call the management API (src/management/). Each is an app of
// the built-in product gateway-management, held by a reserved developer that no other operation
// shows or touches, and limited to the scopes it was made with; it gets its tokens with
// client_credentials, as every app does.
import { newKey, newSecret, secretHash } from '../crypto.ts';
import { StoreError, type App, type Developer } from '../store/port/index.ts';
import type { CreatedApp } from './apps.ts';
import { audit } from './audit.ts';
import { asOperator, ofApp, type OperatorDeps } from './deps.ts';
import { AdminError } from './errors.ts';
import { requireName } from './inputs.ts';

export const MANAGEMENT_PRODUCT = 'gateway-management';
/** The reserved developer of every management client: `.invalid` (RFC 2606) can be no one's mail address. */
export const MANAGEMENT_DEVELOPER = 'management@gateway.invalid';

/** The management API's scopes, by area and action, with what each allows. */
export const MANAGEMENT_SCOPES = {
  'developers:read': 'List and read developers.',
  'developers:write': 'Create, invite, disable, enable and delete developers.',
  'apps:read': 'List and read apps and their keys (never a secret).',
  'apps:write': 'Register, approve, disable, enable and delete apps.',
  'keys:write': "Rotate, import and revoke apps' keys.",
  'tokens:revoke': 'Revoke every token of an app, or of a user across apps.',
  'products:read': 'Read the API products the configuration declares.',
  'usage:read': 'Read calls per app, product, route and status class per hour.',
} as const;

export type ManagementScope = keyof typeof MANAGEMENT_SCOPES;
const ALL_SCOPES = Object.keys(MANAGEMENT_SCOPES) as ManagementScope[];

/** Whether a developer or an app belongs to the management clients, which the operations on developers' apps leave alone. */
export const isReserved = (owner: Pick<Developer, 'email'> | Pick<App, 'developerEmail'>): boolean => ('email' in owner ? owner.email : owner.developerEmail) === MANAGEMENT_DEVELOPER;

function requireScopes(scopes: readonly string[]): ManagementScope[] {
  const unknown = scopes.filter((s) => !(ALL_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new AdminError('invalid_scope', `unknown scope "${unknown[0]}" (known: ${ALL_SCOPES.join(', ')})`);
  if (scopes.length === 0) throw new AdminError('invalid_scope', `name at least one scope (known: ${ALL_SCOPES.join(', ')})`);
  return ALL_SCOPES.filter((s) => scopes.includes(s));
}

/** The reserved developer, made the first time a client is. */
async function owner(deps: OperatorDeps): Promise<Developer> {
  const found = await deps.store.accounts.findDeveloper(MANAGEMENT_DEVELOPER);
  if (found !== undefined) return found;
  try {
    return await deps.store.accounts.createDeveloper({ email: MANAGEMENT_DEVELOPER, name: 'Management clients', now: deps.clock() });
  } catch (err) {
    // Made meanwhile by another command.
    const made = err instanceof StoreError && err.code === 'conflict' ? await deps.store.accounts.findDeveloper(MANAGEMENT_DEVELOPER) : undefined;
    if (made === undefined) throw err;
    return made;
  }
}

/** A new management client with the scopes it may have; its key and secret are shown once. */
export async function createManagementClient(deps: OperatorDeps, input: { name: string; scopes: readonly string[] }): Promise<CreatedApp<'confidential'>> {
  const name = requireName(input.name, 'the client name');
  const scopes = requireScopes(input.scopes);
  const dev = await owner(deps);
  const key = newKey();
  const secret = newSecret();
  let app: App;
  try {
    app = await deps.store.apps.createApp({ developerId: dev.id, name, product: MANAGEMENT_PRODUCT, key, secretHash: secretHash(deps.secretKey, secret), now: deps.clock(), scopes });
  } catch (err) {
    if (err instanceof StoreError && err.code === 'conflict') throw new AdminError('duplicate_client', `there is already a management client named "${name}"`);
    throw err;
  }
  audit(deps.logger, 'app.register', { actor: asOperator(deps), ...ofApp(app), key, approval: app.approval, redirectUris: app.redirectUris });
  return { app, key, secret };
}

/** The management clients with their keys. */
export async function listManagementClients(deps: OperatorDeps): Promise<(App & { keys: string[] })[]> {
  const apps = await deps.store.apps.listApps({ developerEmail: MANAGEMENT_DEVELOPER });
  return Promise.all(apps.map(async (app) => ({ ...app, keys: (await deps.store.apps.listCredentials(app.id)).filter((c) => c.status === 'approved').map((c) => c.key) })));
}

/** Deletes a management client by one of its keys: its tokens stop working at once. */
export async function deleteManagementClient(deps: OperatorDeps, key: string): Promise<App> {
  const app = await deps.store.apps.findAppByKey(key);
  if (app === undefined || !isReserved(app)) throw new AdminError('unknown_client', `no management client with key ${key}`);
  if (!(await deps.store.apps.deleteApp(app.id, deps.clock()))) throw new AdminError('unknown_client', `no management client with key ${key}`);
  audit(deps.logger, 'app.delete', { actor: asOperator(deps), ...ofApp(app) });
  return app;
}
