// What a person types, checked alike from the CLI and the portal: emails, names, passwords.
import { hasUnsafeCharacters } from '../text.ts';
import { AdminError } from './errors.ts';
import { passwordProblem } from './passwords.ts';

// The domain's `[^\s@]+\.[^\s@]+` tries every dot, each to the end: quadratic in the length, which is
// why the length is checked first.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (e.length > 254 || !EMAIL.test(e) || hasUnsafeCharacters(e)) throw new AdminError('invalid_email', `"${email}" is not an email address`);
  return e;
}

/** Every name a person types (developer, app) passes here, from the CLI and the portal alike. */
export function requireName(value: string, what: string): string {
  const name = value.trim();
  if (name === '' || name.length > 100) throw new AdminError('invalid_name', `${what} must be 1 to 100 characters`);
  if (hasUnsafeCharacters(name)) {
    throw new AdminError('invalid_name', `${what} must not contain control characters or bidirectional text overrides`);
  }
  return name;
}

/** A new portal password, as src/admin/passwords.ts's rules allow. */
export function requirePassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem !== undefined) throw new AdminError('weak_password', problem);
}
