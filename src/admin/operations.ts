// Operations on developers, apps and keys, shared by `gateway admin` and the developer portal.
import { newInvitation, newKey, newMailLinkToken, newSecret, secretHash, sha256 } from '../crypto.ts';
import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import { audit, type Actor, type AppRef, type DeveloperActor, type DeveloperRef, type LoginFailure, type VisitorActor } from './audit.ts';
import { passwordProblem, type Passwords } from './passwords.ts';
import { admitAttempt, attemptSucceeded, MAIL_REQUESTS, PORTAL_LOGIN, waitText } from '../login-throttle.ts';
import { hasUnsafeCharacters } from '../text.ts';
import type { PortalSettings, ProductSettings } from '../config/load.ts';
import { StoreError, type App, type Approval, type Credential, type Developer, type EmailTokenPurpose, type Store } from '../store/port/index.ts';

/** What the operations use: a few services, the config's products, and its portal settings (limits, sign-up, key overlap). */
export interface AdminDeps {
  store: Store;
  /** Key of the keyed hash of app secrets. */
  secretKey: KeyObject;
  /** Epoch milliseconds. */
  clock: () => number;
  logger: Logger;
  passwords: Passwords;
  products: ReadonlyMap<string, ProductSettings>;
  portal: PortalSettings | undefined;
}

/**
 * What the operator's own operations (`gateway admin`) run with: who runs them, by OS account, for
 * their audit lines. The portal has no operator, so it cannot call them.
 */
export interface OperatorDeps extends AdminDeps {
  operator: string;
}

const asOperator = (deps: OperatorDeps) => ({ kind: 'operator', user: deps.operator }) as const;
const asDeveloper = (dev: Developer): DeveloperActor => ({ kind: 'developer', id: dev.id, email: dev.email });
const asVisitor = (clientIp: string): VisitorActor => ({ kind: 'visitor', ip: clientIp });
const developerRef = (dev: Developer): DeveloperRef => ({ id: dev.id, email: dev.email });
/** The audit fields of a line about an app: its developer and the app. */
const ofApp = (app: App): { developer: DeveloperRef; app: AppRef } => ({
  developer: { id: app.developerId, email: app.developerEmail },
  app: { id: app.id, name: app.name, product: app.product },
});

export class AdminError extends Error {
  override readonly name = 'AdminError';
  readonly code: string;
  /** Seconds until the operation may be tried again (a throttled login or mail request). */
  readonly retryAfter: number | undefined;
  constructor(code: string, message: string, retryAfter?: number) {
    super(message);
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

// The domain's `[^\s@]+\.[^\s@]+` tries every dot, each to the end: quadratic in the length, which is
// why the length is checked first.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (e.length > 254 || !EMAIL.test(e) || hasUnsafeCharacters(e)) throw new AdminError('invalid_email', `"${email}" is not an email address`);
  return e;
}

/** Every name a person types (developer, app) passes here, from the CLI and the portal alike. */
function requireName(value: string, what: string): string {
  const name = value.trim();
  if (name === '' || name.length > 100) throw new AdminError('invalid_name', `${what} must be 1 to 100 characters`);
  if (hasUnsafeCharacters(name)) {
    throw new AdminError('invalid_name', `${what} must not contain control characters or bidirectional text overrides`);
  }
  return name;
}

/**
 * An operator's developer, verified: the operator vouches for the address. An account that holds
 * the address without having proved it (an open sign-up, perhaps someone else's) is replaced, and
 * its apps deleted with their keys and tokens.
 */
export async function createDeveloper(deps: OperatorDeps, input: { email: string; name: string }): Promise<Developer> {
  const email = normaliseEmail(input.email);
  const name = requireName(input.name, 'the developer name');
  const now = deps.clock();
  let developer: Developer;
  let replaced = false;
  try {
    developer = await deps.store.accounts.createDeveloper({ email, name, now });
  } catch (err) {
    if (!(err instanceof StoreError && err.code === 'conflict')) throw err;
    const replacement = await deps.store.accounts.replaceUnverifiedDeveloper({ email, name, now });
    if (replacement === undefined) throw new AdminError('duplicate_developer', `developer ${email} already exists`);
    developer = replacement;
    replaced = true;
  }
  audit(deps.logger, 'developer.create', { actor: asOperator(deps), developer: developerRef(developer), replaced });
  return developer;
}

export async function listDevelopers(deps: AdminDeps): Promise<Developer[]> {
  return deps.store.accounts.listDevelopers();
}

async function requireDeveloper(deps: AdminDeps, email: string): Promise<Developer> {
  const dev = await deps.store.accounts.findDeveloper(normaliseEmail(email));
  if (dev === undefined) throw new AdminError('unknown_developer', `no developer ${email.trim().toLowerCase()}`);
  return dev;
}

/** Disabling a developer stops token issuance to their apps and invalidates the tokens they hold. */
export async function setDeveloperStatus(deps: OperatorDeps, email: string, status: Developer['status']): Promise<Developer> {
  const dev = await requireDeveloper(deps, email);
  const updated = (await deps.store.accounts.setDeveloperStatus(dev.email, status, deps.clock()))!;
  audit(deps.logger, status === 'disabled' ? 'developer.disable' : 'developer.enable', { actor: asOperator(deps), developer: developerRef(updated) });
  return updated;
}

export interface CreatedApp {
  app: App;
  key: string;
  /** Shown once; only its keyed hash is stored. */
  secret: string;
}

function requireProduct(deps: AdminDeps, name: string): ProductSettings {
  const product = deps.products.get(name);
  if (product === undefined) {
    const known = [...deps.products.keys()].join(', ');
    throw new AdminError('unknown_product', `no API product "${name}" (known: ${known})`);
  }
  return product;
}

async function requireActiveDeveloper(deps: AdminDeps, email: string): Promise<Developer> {
  return activeDeveloper(await requireDeveloper(deps, email));
}

/**
 * The portal's developer as the store has them now, by id: a session looked up a moment ago may
 * belong to an account since disabled, or replaced by another under the same address.
 */
async function requireSessionDeveloper(deps: AdminDeps, developer: Developer): Promise<Developer> {
  const dev = await deps.store.accounts.findDeveloperById(developer.id);
  if (dev === undefined) throw new AdminError('unknown_developer', 'your account no longer exists: log in again');
  return activeDeveloper(dev);
}

function activeDeveloper(dev: Developer): Developer {
  if (dev.status !== 'active') throw new AdminError('developer_disabled', `developer ${dev.email} is disabled`);
  // An unproven address may be someone else's: its apps would reach upstreams in that name.
  if (!dev.verified) throw new AdminError('unverified_email', `developer ${dev.email} has not confirmed the email address yet`);
  return dev;
}

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
    if (err instanceof StoreError && err.code === 'conflict') {
      throw new AdminError('duplicate_app', `developer ${dev.email} already has an app named "${name}"`);
    }
    if (err instanceof StoreError && err.code === 'limit') {
      throw new AdminError('too_many_apps', `you already have ${options.maxApps} apps, the most the portal allows: delete one first`);
    }
    throw err;
  }
}

/** An operator registers an app: approved at once, whatever the product's approval, and not bound by the portal's limit. */
export async function createApp(deps: OperatorDeps, input: { developer: string; name: string; product: string }): Promise<CreatedApp> {
  const product = requireProduct(deps, input.product);
  const name = requireName(input.name, 'the app name');
  const dev = await requireActiveDeveloper(deps, input.developer);
  const created = await insertApp(deps, dev, name, product, { approval: 'approved' });
  audit(deps.logger, 'app.register', { actor: asOperator(deps), ...ofApp(created.app), key: created.key, approval: created.app.approval });
  return created;
}

const DEFAULT_MAX_APPS = 10;

const disabledApp = (app: App) =>
  new AdminError('app_disabled', `the app "${app.name}" was disabled by the API team: it cannot be deleted or replaced here; ask the API team about it`);

/**
 * A developer registers an app in the portal: at most portal.maxAppsPerDeveloper of them, never
 * under the name of an app an operator disabled (a new app would stand in for it), and pending
 * an operator's approval when the product's approval is manual.
 */
export async function registerOwnApp(deps: AdminDeps, developer: Developer, input: { name: string; product: string }): Promise<CreatedApp> {
  const product = requireProduct(deps, input.product);
  const name = requireName(input.name, 'the app name');
  const dev = await requireSessionDeveloper(deps, developer);
  const held = await deps.store.apps.findApp(dev.email, name);
  if (held?.status === 'disabled') throw disabledApp(held);
  const maxApps = deps.portal?.maxAppsPerDeveloper ?? DEFAULT_MAX_APPS;
  const created = await insertApp(deps, dev, name, product, { approval: product.approval === 'manual' ? 'pending' : 'approved', maxApps });
  audit(deps.logger, 'app.register', { actor: asDeveloper(dev), ...ofApp(created.app), key: created.key, approval: created.app.approval });
  return created;
}

export interface AppDetails extends App {
  credentials: Credential[];
}

/** Apps, each with its keys (`show`, `disable` and `revoke` take a key). */
export async function listApps(deps: AdminDeps, filter: { developer?: string } = {}): Promise<AppDetails[]> {
  if (filter.developer === undefined) return withCredentials(deps, await deps.store.apps.listApps());
  const dev = await requireDeveloper(deps, filter.developer);
  return withCredentials(deps, await deps.store.apps.listApps({ developerEmail: dev.email }));
}

/** A developer's app by its id, with its keys; another developer's is as absent as an unknown one. */
export async function findOwnApp(deps: AdminDeps, developer: Developer, id: string): Promise<AppDetails | undefined> {
  const app = await deps.store.apps.findAppById(id);
  if (app === undefined || app.developerId !== developer.id) return undefined;
  return { ...app, credentials: await deps.store.apps.listCredentials(app.id) };
}

/** A developer's apps, each with its keys. */
export async function listOwnApps(deps: AdminDeps, developer: Developer): Promise<AppDetails[]> {
  return withCredentials(deps, await deps.store.apps.listApps({ developerEmail: developer.email }));
}

function withCredentials(deps: AdminDeps, apps: readonly App[]): Promise<AppDetails[]> {
  return Promise.all(apps.map(async (app) => ({ ...app, credentials: await deps.store.apps.listCredentials(app.id) })));
}

/** An app by its key, or by developer and name. */
export async function findApp(deps: AdminDeps, ref: { key: string } | { developer: string; name: string }): Promise<AppDetails> {
  const app = 'key' in ref ? await deps.store.apps.findAppByKey(ref.key) : await deps.store.apps.findApp(normaliseEmail(ref.developer), ref.name);
  if (app === undefined) {
    throw new AdminError('unknown_app', 'key' in ref ? `no app with key ${ref.key}` : `developer ${ref.developer} has no app "${ref.name}"`);
  }
  return { ...app, credentials: await deps.store.apps.listCredentials(app.id) };
}

/** Disabling an app stops token issuance and invalidates its tokens at once. */
export async function setAppStatus(deps: OperatorDeps, ref: { key: string } | { developer: string; name: string }, status: App['status']): Promise<AppDetails> {
  const app = await findApp(deps, ref);
  const updated = await deps.store.apps.setAppStatus(app.id, status, deps.clock());
  audit(deps.logger, status === 'disabled' ? 'app.disable' : 'app.enable', { actor: asOperator(deps), ...ofApp(app) });
  return { ...(updated ?? app), credentials: app.credentials };
}

export interface RotatedKey extends CreatedApp {
  /** Until when (epoch ms) the app's earlier keys keep working. */
  overlapUntil: number;
}

const DEFAULT_KEY_OVERLAP_MS = 86_400_000;

/** A new key and secret for the app; the earlier ones keep working for the configured overlap, then stop. */
export async function rotateKey(deps: OperatorDeps, ref: { key: string } | { developer: string; name: string }): Promise<RotatedKey> {
  return rotate(deps, asOperator(deps), await findApp(deps, ref));
}

async function rotate(deps: AdminDeps, actor: Extract<Actor, { kind: 'operator' | 'developer' }>, app: App): Promise<RotatedKey> {
  const now = deps.clock();
  const overlapUntil = now + (deps.portal?.keyOverlapMs ?? DEFAULT_KEY_OVERLAP_MS);
  const key = newKey();
  const secret = newSecret();
  await deps.store.apps.rotateCredential({ appId: app.id, key, secretHash: secretHash(deps.secretKey, secret), now, overlapUntil });
  audit(deps.logger, 'key.rotate', { actor, ...ofApp(app), key, overlapUntil });
  return { app, key, secret, overlapUntil };
}

/**
 * A developer rotates their app's key in the portal: not an app an operator disabled, nor one of
 * a disabled developer (the new key would not work, but the old one would be set to expire).
 */
export async function rotateOwnKey(deps: AdminDeps, developer: Developer, id: string): Promise<RotatedKey> {
  const app = await findOwnApp(deps, developer, id);
  if (app === undefined) throw new AdminError('unknown_app', 'there is no such app');
  if (app.status === 'disabled') throw disabledApp(app);
  await requireSessionDeveloper(deps, developer);
  return rotate(deps, asDeveloper(developer), app);
}

/**
 * A developer deletes their app in the portal: not an app an operator disabled, nor any app of a
 * disabled developer, which would erase what the operator stopped (its tokens, usage and counts).
 */
export async function deleteOwnApp(deps: AdminDeps, developer: Developer, id: string): Promise<App> {
  const app = await findOwnApp(deps, developer, id);
  if (app === undefined) throw new AdminError('unknown_app', 'there is no such app');
  if (app.status === 'disabled') throw disabledApp(app);
  await requireSessionDeveloper(deps, developer);
  // Checked again in the store's transaction, in case an operator disables it meanwhile.
  if (!(await deps.store.apps.deleteApp(app.id, deps.clock(), { onlyIfActive: true }))) {
    const now = await deps.store.apps.findAppById(app.id);
    if (now === undefined) throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
    if (now.status === 'disabled') throw disabledApp(now);
    throw new AdminError('developer_disabled', `developer ${developer.email} is disabled`);
  }
  audit(deps.logger, 'app.delete', { actor: asDeveloper(developer), ...ofApp(app) });
  return app;
}

/** An operator lets an app registered in the portal use its keys (idempotent). */
export async function approveApp(deps: OperatorDeps, ref: { key: string } | { developer: string; name: string }): Promise<AppDetails> {
  const app = await findApp(deps, ref);
  const updated = await deps.store.apps.setAppApproval(app.id, 'approved', deps.clock());
  audit(deps.logger, 'app.approve', { actor: asOperator(deps), ...ofApp(app) });
  return { ...(updated ?? app), credentials: app.credentials };
}

/** An operator deletes the app with its keys; its tokens stop working at once. */
export async function deleteApp(deps: OperatorDeps, ref: { key: string } | { developer: string; name: string }): Promise<App> {
  const app = await findApp(deps, ref);
  if (!(await deps.store.apps.deleteApp(app.id, deps.clock()))) throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
  audit(deps.logger, 'app.delete', { actor: asOperator(deps), ...ofApp(app) });
  return app;
}

/** Revoking a key stops token issuance with it and invalidates the tokens issued through it. */
export async function revokeKey(deps: OperatorDeps, key: string): Promise<void> {
  await revoke(deps, asOperator(deps), await deps.store.apps.findAppByKey(key), key);
}

/** A developer revokes a key of their app in the portal; another developer's is as unknown as a key that does not exist. */
export async function revokeOwnKey(deps: AdminDeps, developer: Developer, id: string, key: string): Promise<void> {
  const app = await findOwnApp(deps, developer, id);
  await revoke(deps, asDeveloper(developer), app?.credentials.some((c) => c.key === key) ? app : undefined, key);
}

/** Revokes `key` of `app`, the app its key names (undefined: none). */
async function revoke(deps: AdminDeps, actor: Extract<Actor, { kind: 'operator' | 'developer' }>, app: App | undefined, key: string): Promise<void> {
  if (app === undefined) throw new AdminError('unknown_key', `no key ${key}`);
  if (!(await deps.store.apps.revokeCredential(key, deps.clock()))) throw new AdminError('already_revoked', `key ${key} is already revoked`);
  audit(deps.logger, 'key.revoke', { actor, ...ofApp(app), key });
}

// Portal accounts.

export const INVITATION_VALID_MS = 7 * 86_400_000;

/**
 * A one-time code with which the developer sets a portal password: the only way into an account
 * an operator created, and, for an account that has a password, a reset. Replaces any earlier code.
 * An account that never proved its address is replaced first (its apps deleted): the invitation
 * goes to the address's owner, who may not be whoever signed up with it.
 */
export async function inviteDeveloper(deps: OperatorDeps, email: string, validMs = INVITATION_VALID_MS): Promise<{ developer: Developer; code: string; expiresAt: number }> {
  const found = await requireDeveloper(deps, email);
  const replacement = found.verified ? undefined : await deps.store.accounts.replaceUnverifiedDeveloper({ email: found.email, name: found.name, now: deps.clock() });
  const developer = replacement ?? found;
  const code = newInvitation();
  const expiresAt = deps.clock() + validMs;
  await deps.store.accounts.setInvitation(developer.email, sha256(code), expiresAt);
  audit(deps.logger, 'developer.invite', { actor: asOperator(deps), developer: developerRef(developer), replaced: replacement !== undefined, expiresAt });
  return { developer, code, expiresAt };
}

/** A developer with an invitation code sets the password of the account an operator created for them. */
export async function acceptInvitation(deps: AdminDeps, input: { email: string; password: string; invitation: string; clientIp: string }): Promise<Login> {
  const email = normaliseEmail(input.email);
  const problem = passwordProblem(input.password);
  if (problem !== undefined) throw new AdminError('weak_password', problem);
  const passwordHash = await deps.passwords.hash(input.password);
  const dev = await deps.store.accounts.acceptInvitation({ email, codeHash: sha256(input.invitation.trim()), passwordHash, now: deps.clock() });
  if (dev === undefined) throw new AdminError('invalid_invitation', 'this invitation code is wrong, used or expired for this email: ask the API team for a new one');
  audit(deps.logger, 'developer.signup', { actor: asVisitor(input.clientIp), developer: developerRef(dev), signup: 'invitation' });
  return { developer: dev, passwordHash };
}

export const CONFIRM_LINK_VALID_MS = 24 * 60 * 60_000;
export const RESET_LINK_VALID_MS = 60 * 60_000;

/**
 * Counts a request that would mail something (a sign-up, a new confirmation link, a password
 * reset) against the client's address, before anything else is done, so that nobody can make the
 * portal mail strangers (or one victim) at will.
 */
async function countMailRequest(deps: AdminDeps, clientIp: string): Promise<void> {
  const retryAfter = await admitAttempt(deps.store, [{ account: `portal-mail|${clientIp}`, rule: MAIL_REQUESTS }], deps.clock());
  if (retryAfter !== undefined) {
    throw new AdminError('mail_throttled', `too many sign-ups or mailed links from your address: try again in ${waitText(retryAfter)}`, retryAfter);
  }
}

/** A new single-use link token for the developer (replacing the earlier one of that purpose); the store keeps its SHA-256. */
async function newMailLink(deps: AdminDeps, developer: Developer, purpose: EmailTokenPurpose): Promise<string> {
  const token = newMailLinkToken();
  const now = deps.clock();
  const validMs = purpose === 'verify' ? CONFIRM_LINK_VALID_MS : RESET_LINK_VALID_MS;
  await deps.store.accounts.saveEmailToken({ hash: sha256(token), developerId: developer.id, purpose, now, expiresAt: now + validMs });
  return token;
}

/** What an open sign-up did: a new, unverified account with its confirmation token, or nothing, for an address already taken. */
export type SignUpResult = { kind: 'created'; developer: Developer; token: string } | { kind: 'taken'; developer: Developer };

/**
 * Open sign-up: a new developer who cannot register apps until the address is confirmed. An
 * address already taken is not an error (the caller must answer both alike, so that sign-up does
 * not tell which addresses have accounts), and an existing account is never taken over.
 */
export async function openSignUp(deps: AdminDeps, input: { email: string; name: string; password: string; clientIp: string }): Promise<SignUpResult> {
  if (deps.portal?.signup !== 'open') throw new AdminError('not_invited', 'sign-up is by invitation: enter the invitation code the API team gave you');
  const email = normaliseEmail(input.email);
  const problem = passwordProblem(input.password);
  if (problem !== undefined) throw new AdminError('weak_password', problem);
  const name = requireName(input.name, 'the name');
  await countMailRequest(deps, input.clientIp);
  // Hashed whether or not the address is taken, so that both answers take as long.
  const passwordHash = await deps.passwords.hash(input.password);
  const result = await signUp(deps, { email, name, passwordHash });
  audit(deps.logger, 'developer.signup', { actor: asVisitor(input.clientIp), developer: developerRef(result.developer), signup: 'open', result: result.kind });
  return result;
}

async function signUp(deps: AdminDeps, input: { email: string; name: string; passwordHash: string }): Promise<SignUpResult> {
  try {
    const developer = await deps.store.accounts.createDeveloper({ ...input, now: deps.clock(), verified: false });
    return { kind: 'created', developer, token: await newMailLink(deps, developer, 'verify') };
  } catch (err) {
    if (!(err instanceof StoreError && err.code === 'conflict')) throw err;
    const developer = await deps.store.accounts.findDeveloper(input.email);
    if (developer === undefined) throw err;
    return { kind: 'taken', developer };
  }
}

/**
 * Confirms the address with the link's token. The one who follows the link must also log in:
 * whoever signed up with someone else's address knows the password but cannot read the mail, and
 * the address's owner can read the mail but does not know that password. Only both together
 * prove that the account's owner holds the address.
 */
export async function confirmEmail(deps: AdminDeps, input: { token: string; email: string; password: string; clientIp: string }): Promise<Login> {
  // One answer for a wrong link and a wrong password, so that the form tells nothing about accounts.
  const invalid = new AdminError('invalid_link', 'this link is wrong, used or expired, or the email or password is wrong: to get a new link, use "Forgot your password?"');
  const attempt = { actor: asVisitor(input.clientIp), form: 'confirm' } as const;
  const login = await checkPassword(deps, input, attempt).catch((err: unknown) => {
    throw err instanceof AdminError && err.code === 'login_failed' ? invalid : err;
  });
  const confirmed = await deps.store.accounts.confirmEmail({ hash: sha256(input.token.trim()), developerId: login.developer.id, now: deps.clock() });
  if (confirmed === undefined) throw loginRefused(deps, attempt, 'invalid_link', login.developer.email, invalid);
  await login.accepted();
  audit(deps.logger, 'developer.confirm', { actor: attempt.actor, developer: developerRef(confirmed) });
  return { developer: confirmed, passwordHash: login.passwordHash };
}

/**
 * A password-reset request: counted against the client's address now; the link for the address,
 * if it has an active account, is made by `later`, which the caller runs after it has answered,
 * so that the answer takes as long whether or not the address has an account.
 */
export async function requestPasswordReset(
  deps: AdminDeps,
  input: { email: string; clientIp: string },
): Promise<{ later: () => Promise<{ developer: Developer; token: string } | undefined> }> {
  const email = normaliseEmail(input.email);
  await countMailRequest(deps, input.clientIp);
  const actor = asVisitor(input.clientIp);
  return {
    async later() {
      const developer = await deps.store.accounts.findDeveloper(email);
      if (developer === undefined || developer.status !== 'active') {
        audit(deps.logger, 'developer.reset_request', { actor, email, result: 'no_active_account' });
        return undefined;
      }
      const token = await newMailLink(deps, developer, 'reset');
      audit(deps.logger, 'developer.reset_request', { actor, developer: developerRef(developer), result: 'link_made' });
      return { developer, token };
    },
  };
}

/**
 * Sets a new password with a reset link's token. Every session of the developer ends, and an
 * unverified developer becomes verified: the link reached them.
 */
export async function resetPassword(deps: AdminDeps, input: { token: string; password: string; clientIp: string }): Promise<Developer> {
  const problem = passwordProblem(input.password);
  if (problem !== undefined) throw new AdminError('weak_password', problem);
  const passwordHash = await deps.passwords.hash(input.password);
  const dev = await deps.store.accounts.resetPassword({ hash: sha256(input.token.trim()), passwordHash, now: deps.clock() });
  if (dev === undefined) throw new AdminError('invalid_link', 'this link is wrong, used or expired: ask for a new one');
  await deps.store.throttles.clearLoginFailures(`portal|${dev.email}`);
  audit(deps.logger, 'developer.reset', { actor: asVisitor(input.clientIp), developer: developerRef(dev) });
  return dev;
}

/**
 * A developer whose password was just checked, and the hash it was checked against: a session
 * starts only while that is still their password (Store.createSession).
 */
export interface Login {
  developer: Developer;
  passwordHash: string;
}

const loginFailed = () => new AdminError('login_failed', 'wrong email or password, or the address is not confirmed yet (follow the link we mailed you)');

/** Where a password was typed, and by whom: the audit line of a failed check names both. */
interface Attempt {
  actor: VisitorActor | DeveloperActor;
  form: 'login' | 'confirm' | 'password_change';
}

/** Writes the failed attempt's audit line and returns `error`, for the caller to throw. */
function loginRefused(deps: AdminDeps, attempt: Attempt, reason: LoginFailure, email: string | undefined, error = loginFailed()): AdminError {
  audit(deps.logger, 'developer.login_failed', { ...attempt, reason, ...(email === undefined ? {} : { email }) });
  return error;
}

/**
 * Checks an email and password, slowed as src/login-throttle.ts says. The attempt stays counted
 * until the caller accepts the login (`accepted`): a right password on an account that may not
 * log in counts like a wrong one, or the throttle would tell the two apart. Each refusal here
 * writes its audit line; a caller that refuses after the check writes its own.
 */
async function checkPassword(deps: AdminDeps, input: { email: string; password: string }, attempt: Attempt): Promise<Login & { accepted: () => Promise<void> }> {
  let email: string;
  try {
    email = normaliseEmail(input.email);
  } catch {
    // Not logged: what was typed where the email goes may be a password.
    throw loginRefused(deps, attempt, 'invalid_email', undefined);
  }
  const account = `portal|${email}`;
  const retryAfter = await admitAttempt(deps.store, [{ account, rule: PORTAL_LOGIN }], deps.clock());
  if (retryAfter !== undefined) {
    const throttled = new AdminError('login_throttled', `too many failed logins for this account: try again in ${waitText(retryAfter)}`, retryAfter);
    throw loginRefused(deps, attempt, 'throttled', email, throttled);
  }
  const passwordHash = await deps.store.accounts.findPasswordHash(email);
  const matches = await deps.passwords.verify(input.password, passwordHash);
  const dev = matches ? await deps.store.accounts.findDeveloper(email) : undefined;
  if (passwordHash === undefined) throw loginRefused(deps, attempt, 'unknown_developer', email);
  if (passwordHash === null) throw loginRefused(deps, attempt, 'no_password', email);
  if (!matches) throw loginRefused(deps, attempt, 'wrong_password', email);
  if (dev === undefined) throw loginRefused(deps, attempt, 'unknown_developer', email);
  if (dev.status !== 'active') throw loginRefused(deps, attempt, 'disabled', email);
  return { developer: dev, passwordHash, accepted: () => attemptSucceeded(deps.store, [account]) };
}

/**
 * Checks an email and password for a login. An account whose address is not confirmed cannot
 * log in: else signing up with an address and then logging in with the password just chosen
 * would tell whether the address already had an account (the login fails only if it did). One
 * answer for every failure.
 */
async function checkLogin(deps: AdminDeps, input: { email: string; password: string }, attempt: Attempt): Promise<Login> {
  const { developer, passwordHash, accepted } = await checkPassword(deps, input, attempt);
  if (!developer.verified) throw loginRefused(deps, attempt, 'unverified', developer.email);
  await accepted();
  return { developer, passwordHash };
}

/** Logs in with an email and password, as checkLogin says. */
export async function logIn(deps: AdminDeps, input: { email: string; password: string; clientIp: string }): Promise<Login> {
  const actor = asVisitor(input.clientIp);
  const login = await checkLogin(deps, input, { actor, form: 'login' });
  audit(deps.logger, 'developer.login', { actor, developer: developerRef(login.developer) });
  return login;
}

/** Sets a new password after checking the current one; every session of the developer ends, and the answer logs this browser in again. */
export async function changePassword(deps: AdminDeps, developer: Developer, input: { current: string; next: string }): Promise<Login> {
  const actor = asDeveloper(developer);
  await checkLogin(deps, { email: developer.email, password: input.current }, { actor, form: 'password_change' }).catch((err: unknown) => {
    throw err instanceof AdminError && err.code === 'login_failed' ? new AdminError('wrong_password', 'the current password is wrong') : err;
  });
  const problem = passwordProblem(input.next);
  if (problem !== undefined) throw new AdminError('weak_password', problem);
  const passwordHash = await deps.passwords.hash(input.next);
  await deps.store.accounts.setPasswordHash(developer.email, passwordHash);
  await deps.store.accounts.deleteSessions(developer.id);
  audit(deps.logger, 'developer.password_change', { actor, developer: developerRef(developer) });
  return { developer, passwordHash };
}
