// What an operator does with keys and tokens besides rotating and revoking a key (./apps.ts):
// registering a key made by another gateway, and revoking every token of an app or of a user.
import { CLIENT_KEY, secretHash } from '../crypto.ts';
import { StoreError, type Credential } from '../store/port/index.ts';
import { hasUnsafeCharacters } from '../text.ts';
import { findApp, type AppRef } from './apps.ts';
import { audit } from './audit.ts';
import { asOperator, ofApp, type OperatorDeps } from './deps.ts';
import { AdminError } from './errors.ts';

/** An imported secret: RFC 6749 §2.3.1's VSCHAR, at least 16 of them (Apigee's and Kong's are 32 or more). */
const IMPORTED_SECRET = /^[\x20-\x7e]{16,512}$/;

/**
 * Registers a key and secret made by another gateway for the app, as Apigee's key import does,
 * so that the client keeps working unchanged. The secret is hashed at once and never stored,
 * logged or returned; the app's other keys stay as they are.
 */
export async function importKey(deps: OperatorDeps, ref: AppRef, input: { key: string; secret: string }): Promise<Credential> {
  if (!CLIENT_KEY.test(input.key)) throw new AdminError('invalid_key', 'an imported key is 8 to 255 letters, digits, ".", "_", "~" or "-", beginning with a letter or digit');
  if (!IMPORTED_SECRET.test(input.secret) || hasUnsafeCharacters(input.secret)) {
    throw new AdminError('invalid_secret', 'an imported secret is 16 to 512 printable ASCII characters');
  }
  const app = await findApp(deps, ref);
  // A public app authenticates by its key alone: an imported secret would be one it is not meant to have.
  if (app.type === 'public') throw new AdminError('public_client_secret', `the app "${app.name}" is public: it holds no secret, so no key with a secret can be imported for it`);
  let credential: Credential | undefined;
  try {
    credential = await deps.store.apps.addCredential({ appId: app.id, key: input.key, secretHash: secretHash(deps.secretKey, input.secret), now: deps.clock() });
  } catch (err) {
    // Any app's key, even a revoked one: a key names one client for good.
    if (err instanceof StoreError && err.code === 'conflict') throw new AdminError('key_taken', `the key ${input.key} is already registered`);
    throw err;
  }
  if (credential === undefined) throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
  audit(deps.logger, 'key.import', { actor: asOperator(deps), ...ofApp(app), key: input.key });
  return credential;
}

/** Revokes every token of an app (its keys stay), or of a user across every app ("log out everywhere"). */
export async function revokeTokens(deps: OperatorDeps, target: { app: AppRef } | { subject: string }): Promise<{ revoked: number }> {
  const now = deps.clock();
  if ('subject' in target) {
    const subject = target.subject;
    if (subject === '' || subject.length > 255 || hasUnsafeCharacters(subject)) throw new AdminError('invalid_subject', 'a subject is 1 to 255 characters without control characters');
    const revoked = await deps.store.tokens.revokeSubjectTokens(subject, now);
    audit(deps.logger, 'tokens.revoke', { actor: asOperator(deps), subject, revoked });
    return { revoked };
  }
  const app = await findApp(deps, target.app);
  const revoked = await deps.store.tokens.revokeAppTokens(app.id, now);
  audit(deps.logger, 'tokens.revoke', { actor: asOperator(deps), ...ofApp(app), revoked });
  return { revoked };
}
