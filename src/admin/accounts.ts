// Portal accounts: invitations, open sign-up and its confirmation, login, password reset and change.
import type { PortalSettings } from '../config/load.ts';
import { newInvitation, newMailLinkToken, secretHash, sha256 } from '../crypto.ts';
import { hostNetwork } from '../http/ip.ts';
import { admitAttempt, attemptSucceeded, MAIL_REQUESTS, MAIL_TO, PORTAL_LOGIN, waitText } from '../login-throttle.ts';
import { StoreError, type Developer, type EmailTokenPurpose } from '../store/port/index.ts';
import { audit, type DeveloperActor, type LoginFailure, type VisitorActor } from './audit.ts';
import { asDeveloper, asOperator, asVisitor, developerRef, type AdminDeps, type OperatorDeps, type PortalDeps } from './deps.ts';
import { requireDeveloper } from './developers.ts';
import { AdminError } from './errors.ts';
import { normaliseEmail, requireName, requirePassword } from './inputs.ts';
import { MANAGEMENT_DEVELOPER } from './management-clients.ts';

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
  // Deleted since it was read: a code for no account would be shown as if it worked.
  if (!(await deps.store.accounts.setInvitation(developer.email, sha256(code), expiresAt))) throw new AdminError('unknown_developer', `no developer ${developer.email}`);
  audit(deps.logger, 'developer.invite', { actor: asOperator(deps), developer: developerRef(developer), replaced: replacement !== undefined, expiresAt });
  return { developer, code, expiresAt };
}

/** The portal's sign-up page with the invitation filled in, when the config has a portal. */
export function invitationLink(portal: PortalSettings | undefined, email: string, code: string): string | undefined {
  if (portal === undefined) return undefined;
  const origin = portal.publicUrl ?? `${portal.tls === undefined ? 'http' : 'https'}://localhost:${portal.port}`;
  return `${origin}/signup?${new URLSearchParams({ email, invitation: code })}`;
}

/** A developer with an invitation code sets the password of the account an operator created for them. */
export async function acceptInvitation(deps: AdminDeps, input: { email: string; password: string; invitation: string; clientIp: string }): Promise<Login> {
  const email = normaliseEmail(input.email);
  requirePassword(input.password);
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
 * reset) against the client's address (an IPv6 one by its /64, which one host may hold whole)
 * and against the address it would mail (keyed-hashed: the store never holds what was typed),
 * before anything else is done, so that nobody can make the portal mail strangers, or one victim
 * from many addresses, at will. Every address is counted, with an account or not: the answer
 * says nothing of which have one.
 */
async function countMailRequest(deps: AdminDeps, clientIp: string, email: string): Promise<void> {
  const from = hostNetwork(clientIp);
  const to = secretHash(deps.secretKey, `portal-mail-to|${email}`).toString('base64url');
  const retryAfter = await admitAttempt(
    deps.store,
    [
      { account: `portal-mail|${from}`, rule: MAIL_REQUESTS },
      { account: `portal-mail-to|${to}`, rule: MAIL_TO },
    ],
    deps.clock(),
  );
  if (retryAfter !== undefined) {
    throw new AdminError('mail_throttled', `too many sign-ups or mailed links from your address, or to this one: try again in ${waitText(retryAfter)}`, retryAfter);
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
export async function openSignUp(deps: PortalDeps, input: { email: string; name: string; password: string; clientIp: string }): Promise<SignUpResult> {
  if (deps.portal.signup !== 'open') throw new AdminError('not_invited', 'sign-up is by invitation: enter the invitation code the API team gave you');
  const email = normaliseEmail(input.email);
  // The management clients' developer: a sign-up under it would make the visitor its owner of record.
  if (email === MANAGEMENT_DEVELOPER) throw new AdminError('invalid_email', `${email} is reserved for the management API's clients`);
  requirePassword(input.password);
  const name = requireName(input.name, 'the name');
  await countMailRequest(deps, input.clientIp, email);
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

/** What a new confirmation link request leads to: a link for an unconfirmed account; for a confirmed one, the notice a sign-up with its address gets. */
export type ConfirmationRequest = { kind: 'link'; developer: Developer; token: string } | { kind: 'confirmed'; developer: Developer };

/**
 * "Send it again" on the page a sign-up answers: a new confirmation link, replacing the earlier
 * one. Counted against the client's address like a sign-up; as with a reset, `later` finds what to
 * mail after the caller has answered, so that the answer is the same, and as quick, whether or not
 * the address has an account.
 */
export async function requestConfirmationLink(deps: PortalDeps, input: { email: string; clientIp: string }): Promise<{ later: () => Promise<ConfirmationRequest | undefined> }> {
  if (deps.portal.signup !== 'open') throw new AdminError('not_invited', 'sign-up is by invitation: enter the invitation code the API team gave you');
  const email = normaliseEmail(input.email);
  await countMailRequest(deps, input.clientIp, email);
  const actor = asVisitor(input.clientIp);
  return {
    async later() {
      const developer = await deps.store.accounts.findDeveloper(email);
      if (developer === undefined || developer.status !== 'active') {
        audit(deps.logger, 'developer.confirm_request', { actor, email, result: 'no_active_account' });
        return undefined;
      }
      if (developer.verified) {
        audit(deps.logger, 'developer.confirm_request', { actor, developer: developerRef(developer), result: 'confirmed_already' });
        return { kind: 'confirmed', developer };
      }
      const token = await newMailLink(deps, developer, 'verify');
      audit(deps.logger, 'developer.confirm_request', { actor, developer: developerRef(developer), result: 'link_made' });
      return { kind: 'link', developer, token };
    },
  };
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
export async function requestPasswordReset(deps: AdminDeps, input: { email: string; clientIp: string }): Promise<{ later: () => Promise<{ developer: Developer; token: string } | undefined> }> {
  const email = normaliseEmail(input.email);
  await countMailRequest(deps, input.clientIp, email);
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
  requirePassword(input.password);
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
  requirePassword(input.next);
  const passwordHash = await deps.passwords.hash(input.next);
  await deps.store.accounts.setPasswordHash(developer.email, passwordHash);
  await deps.store.accounts.deleteSessions(developer.id);
  audit(deps.logger, 'developer.password_change', { actor, developer: developerRef(developer) });
  return { developer, passwordHash };
}
