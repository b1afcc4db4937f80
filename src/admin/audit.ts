// The audit trail: one log line for every change an operator (`gateway admin`) or a developer (the
// portal) makes to developers, apps and keys, and for every portal login, failed or not. Shaped as
// the config reload's line (src/runtime/reload.ts reloadQueue): `audit` names the action, the rest says who
// and to what. Fields name things by their public ids only: never a secret, password, token,
// invitation code, mailed link or session id; the logger's redaction is not relied on.
import type { Logger } from 'pino';
import type { Approval, ClientType } from '../store/port/index.ts';

/**
 * Who did it. `operator`: whoever ran `gateway admin`, by their OS account. `management`: a
 * management client calling the management API, by its key and name. `developer`: a portal
 * session's developer. `visitor`: a portal form that needs no session (sign-up, login, a mailed
 * link), by the client's address as the listener judges it; the line's `developer` says which
 * account the form named or proved.
 */
export type Actor = OperatorActor | DeveloperActor | VisitorActor;
/** Whoever may do what operators do: a person at `gateway admin`, or a management client. */
export type OperatorActor = { kind: 'operator'; user: string } | ManagementActor;
export type ManagementActor = { kind: 'management'; client: string; name: string };
export type DeveloperActor = { kind: 'developer'; id: string; email: string };
export type VisitorActor = { kind: 'visitor'; ip: string };

/** The developer acted on, or whose app or key it is. */
export type DeveloperRef = { id: string; email: string };
/** An app; `type`: confidential (key and secret) or public (key only). */
export type AppRef = { id: string; name: string; product: string; type: ClientType };
type AppLine<A extends Actor> = { actor: A; developer: DeveloperRef; app: AppRef };

/** A store, by what names it without a secret: a Redis URL may hold a password. */
export type StoreRef = { driver: 'sqlite'; path: string } | { driver: 'redis'; keyPrefix: string };

/** Why a password check failed: the account is named by the email tried, except for `invalid_email` (that text may be anything, even a password). */
export type LoginFailure = 'invalid_email' | 'throttled' | 'unknown_developer' | 'no_password' | 'wrong_password' | 'disabled' | 'unverified' | 'invalid_link';

/** The fields of each action's line, besides `audit`. `key` is an app's public key (its client id); times are epoch ms. */
interface Lines {
  /** `replaced`: an unverified open sign-up held the address; it was replaced and its apps deleted. */
  'developer.create': { actor: OperatorActor; developer: DeveloperRef; replaced: boolean };
  'developer.invite': { actor: OperatorActor; developer: DeveloperRef; replaced: boolean; expiresAt: number };
  'developer.disable': { actor: OperatorActor; developer: DeveloperRef };
  'developer.enable': { actor: OperatorActor; developer: DeveloperRef };
  /** Deleted with their apps, keys and tokens. */
  'developer.delete': { actor: OperatorActor; developer: DeveloperRef };
  /** `taken`: the address already had an account, which was left as it was (its owner was mailed). */
  'developer.signup': { actor: VisitorActor; developer: DeveloperRef; signup: 'open'; result: 'created' | 'taken' } | { actor: VisitorActor; developer: DeveloperRef; signup: 'invitation' };
  'developer.confirm': { actor: VisitorActor; developer: DeveloperRef };
  /** A new confirmation link asked for; written once the link is made, or known not to be: after the visitor has had the answer. */
  'developer.confirm_request': { actor: VisitorActor; developer: DeveloperRef; result: 'link_made' | 'confirmed_already' } | { actor: VisitorActor; email: string; result: 'no_active_account' };
  'developer.login': { actor: VisitorActor; developer: DeveloperRef };
  /** Every password check the login throttle counts as failed; `form` is where the password was typed. */
  'developer.login_failed': {
    actor: VisitorActor | DeveloperActor;
    form: 'login' | 'confirm' | 'password_change';
    reason: LoginFailure;
    email?: string;
  };
  'developer.logout': { actor: DeveloperActor; developer: DeveloperRef };
  'developer.password_change': { actor: DeveloperActor; developer: DeveloperRef };
  /** Written once the link is made, or known not to be: after the visitor has had the answer. */
  'developer.reset_request': { actor: VisitorActor; developer: DeveloperRef; result: 'link_made' } | { actor: VisitorActor; email: string; result: 'no_active_account' };
  'developer.reset': { actor: VisitorActor; developer: DeveloperRef };
  'app.register': AppLine<OperatorActor | DeveloperActor> & { key: string; approval: Approval; redirectUris: readonly string[] };
  /** The app's redirect URIs, replaced: all of them, as they are now. */
  'app.redirect_uris': AppLine<OperatorActor | DeveloperActor> & { redirectUris: readonly string[] };
  /** How the app authenticates with a certificate, replaced: the method (none: by its secret again), and the thumbprints of self-signed ones. */
  'app.certificate': AppLine<OperatorActor | DeveloperActor> & { method: string; thumbprints?: string[] };
  'app.approve': AppLine<OperatorActor>;
  'app.disable': AppLine<OperatorActor>;
  'app.enable': AppLine<OperatorActor>;
  'app.delete': AppLine<OperatorActor | DeveloperActor>;
  /** `overlapUntil`: when the app's earlier keys stop working. */
  'key.rotate': AppLine<OperatorActor | DeveloperActor> & { key: string; overlapUntil: number };
  'key.revoke': AppLine<OperatorActor | DeveloperActor> & { key: string };
  /** A key and secret made elsewhere (another gateway), registered for the app; the secret is never in the line. */
  'key.import': AppLine<OperatorActor> & { key: string };
  /** Every token of an app, or of a user across apps, revoked; `revoked`: how many. */
  'tokens.revoke': ({ actor: OperatorActor; developer: DeveloperRef; app: AppRef } | { actor: OperatorActor; subject: string }) & { revoked: number };
  /** A signing key added by hand (the schedule's own are `signing-key.add` lines of the gateway). */
  'signing-key.rotate': { actor: OperatorActor; kid: string; activatesAt: number };
  /** A signing key revoked; `replacement`: the key that signs from now on, when the revoked one was signing. */
  'signing-key.revoke': { actor: OperatorActor; kid: string; replacement: string | null };
  /** A management API call, whatever it did: which operation, and the answer's status. */
  'management.call': { actor: OperatorActor; operation: string; method: string; path: string; status: number };
  /** What `gateway admin migrate` copied from one store into another. */
  'store.migrate': { actor: OperatorActor; from: StoreRef; to: StoreRef; developers: number; apps: number; credentials: number; tokens: number; signingKeys: number };
}

export type AuditAction = keyof Lines;

const MESSAGES: Readonly<Record<AuditAction, string>> = {
  'developer.create': 'developer created',
  'developer.invite': 'developer invited',
  'developer.disable': 'developer disabled',
  'developer.enable': 'developer enabled',
  'developer.delete': 'developer deleted',
  'developer.signup': 'developer signed up',
  'developer.confirm': 'developer confirmed the email address',
  'developer.confirm_request': 'confirmation link requested',
  'developer.login': 'developer logged in',
  'developer.login_failed': 'portal login failed',
  'developer.logout': 'developer logged out',
  'developer.password_change': 'developer changed the password',
  'developer.reset_request': 'password reset requested',
  'developer.reset': 'password reset',
  'app.register': 'app registered',
  'app.approve': 'app approved',
  'app.disable': 'app disabled',
  'app.enable': 'app enabled',
  'app.delete': 'app deleted',
  'app.redirect_uris': 'app redirect URIs replaced',
  'app.certificate': 'app client certificate replaced',
  'key.rotate': 'key rotated',
  'key.revoke': 'key revoked',
  'key.import': 'key imported',
  'tokens.revoke': 'tokens revoked',
  'signing-key.rotate': 'signing key added',
  'signing-key.revoke': 'signing key revoked',
  'management.call': 'management API call',
  'store.migrate': 'store migrated',
};

/**
 * Writes the action's one line: `{ audit: action, actor, developer?, app?, key?, …, msg }`, e.g.
 * `{ audit: 'app.register', actor: { kind: 'developer', id, email }, developer: { id, email },
 * app: { id, name, product }, key, approval: 'pending', msg: 'app registered' }`.
 * A failed login is a warning (someone may be guessing); everything else is info.
 */
export function audit<A extends AuditAction>(logger: Logger, action: A, fields: Lines[A]): void {
  const line: object = { audit: action, ...fields };
  const message: string = MESSAGES[action];
  if (action === 'developer.login_failed') logger.warn(line, message);
  else logger.info(line, message);
}
