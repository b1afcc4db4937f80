// Developers as operators manage them (`gateway admin developers`), and the checks every
// operation on a developer's apps makes first.
import { StoreError, type Developer } from '../store/port/index.ts';
import { audit } from './audit.ts';
import { asOperator, developerRef, type AdminDeps, type OperatorDeps } from './deps.ts';
import { AdminError } from './errors.ts';
import { normaliseEmail, requireName } from './inputs.ts';
import { isReserved, MANAGEMENT_DEVELOPER } from './management-clients.ts';

/**
 * An operator's developer, verified: the operator vouches for the address. An account that holds
 * the address without having proved it (an open sign-up, perhaps someone else's) is replaced, and
 * its apps deleted with their keys and tokens.
 */
export async function createDeveloper(deps: OperatorDeps, input: { email: string; name: string }): Promise<Developer> {
  const email = normaliseEmail(input.email);
  if (email === MANAGEMENT_DEVELOPER) throw new AdminError('invalid_email', `${email} is reserved for the management API's clients`);
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

/** Developers, without the management clients' reserved one. */
export async function listDevelopers(deps: AdminDeps): Promise<Developer[]> {
  return (await deps.store.accounts.listDevelopers()).filter((dev) => !isReserved(dev));
}

/** A developer by email; the management clients' reserved one is as unknown as one that does not exist. */
export async function requireDeveloper(deps: AdminDeps, email: string): Promise<Developer> {
  const dev = await deps.store.accounts.findDeveloper(normaliseEmail(email));
  if (dev === undefined || isReserved(dev)) throw new AdminError('unknown_developer', `no developer ${email.trim().toLowerCase()}`);
  return dev;
}

/** Disabling a developer stops token issuance to their apps and invalidates the tokens they hold. */
export async function setDeveloperStatus(deps: OperatorDeps, email: string, status: Developer['status']): Promise<Developer> {
  const dev = await requireDeveloper(deps, email);
  const updated = await deps.store.accounts.setDeveloperStatus(dev.email, status, deps.clock());
  // Deleted since it was read (a DELETE racing this change).
  if (updated === undefined) throw new AdminError('unknown_developer', `no developer ${dev.email}`);
  audit(deps.logger, status === 'disabled' ? 'developer.disable' : 'developer.enable', { actor: asOperator(deps), developer: developerRef(updated) });
  return updated;
}

/** Deletes a developer with their apps, keys and tokens; the tokens stop working at once. */
export async function deleteDeveloper(deps: OperatorDeps, email: string): Promise<Developer> {
  const dev = await requireDeveloper(deps, email);
  if (!(await deps.store.accounts.deleteDeveloper(dev.id, deps.clock()))) throw new AdminError('unknown_developer', `no developer ${dev.email}`);
  audit(deps.logger, 'developer.delete', { actor: asOperator(deps), developer: developerRef(dev) });
  return dev;
}

export async function requireActiveDeveloper(deps: AdminDeps, email: string): Promise<Developer> {
  return activeDeveloper(await requireDeveloper(deps, email));
}

/**
 * The portal's developer as the store has them now, by id: a session looked up a moment ago may
 * belong to an account since disabled, or replaced by another under the same address.
 */
export async function requireSessionDeveloper(deps: AdminDeps, developer: Developer): Promise<Developer> {
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
