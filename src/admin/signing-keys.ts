// What an operator does with the gateway's signing keys: list them, add the next one by hand,
// revoke one. The schedule (src/oauth/signing/key-ring.ts) does the same on its own.
import type { SigningSettings } from '../config/types.ts';
import { describeKeys, revokeSigningKey, rotateSigningKey, type SigningKeyView } from '../oauth/signing/key-ring.ts';
import { KID } from '../oauth/signing/keys.ts';
import { audit } from './audit.ts';
import { asOperator, type OperatorDeps } from './deps.ts';
import { AdminError } from './errors.ts';

export async function listSigningKeys(deps: OperatorDeps, signing: SigningSettings): Promise<SigningKeyView[]> {
  return describeKeys(await deps.store.signingKeys.listSigningKeys(), signing.retireAfterMs, deps.clock());
}

/** A new key, in the JWKS now, signing publishAhead from now: verifiers have it before its first token. */
export async function rotateSigningKeys(deps: OperatorDeps, signing: SigningSettings): Promise<SigningKeyView> {
  const added = await rotateSigningKey(deps, signing, deps.clock());
  audit(deps.logger, 'signing-key.rotate', { actor: asOperator(deps), kid: added.kid, activatesAt: added.activatesAt });
  return added;
}

/** Out of the JWKS at once, and every token it signed refused; a new key signs when it was the one signing. */
export async function revokeSigningKeyByKid(deps: OperatorDeps, signing: SigningSettings, kid: string): Promise<{ kid: string; replacement: string | null }> {
  if (!KID.test(kid)) throw new AdminError('invalid_kid', 'a signing key id is gwk_ and 22 letters, digits, "-" or "_" (see `gateway admin keys list`)');
  const { revoked, replacement } = await revokeSigningKey(deps, signing, kid, deps.clock());
  if (!revoked) throw new AdminError('unknown_signing_key', `no unrevoked signing key ${kid}`);
  audit(deps.logger, 'signing-key.revoke', { actor: asOperator(deps), kid, replacement: replacement ?? null });
  return { kid, replacement: replacement ?? null };
}
