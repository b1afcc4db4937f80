// `gateway admin migrate`: carries developers, apps, keys, live tokens and signing keys from one
// store into another, empty one, of either driver (SQLite to Redis, or back), with the secret key that their
// secret hashes are keyed with. What stays behind: see src/store/port/transfer.ts.
import { randomBytes, type KeyObject } from 'node:crypto';
import { existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { createPrivateFile, createPrivateFolder } from '../store/files.ts';
import { openStore, type StoreSettings } from '../store/open.ts';
import { StoreError, type Store } from '../store/port/index.ts';
import { keyFingerprint, loadSecretKey } from '../store/secret-key.ts';
import { audit, type OperatorActor, type StoreRef } from './audit.ts';
import { AdminError } from './operations.ts';

export interface MigrationCounts {
  developers: number;
  apps: number;
  credentials: number;
  tokens: number;
  signingKeys: number;
}

export interface MigrationResult extends MigrationCounts {
  /** The target's key file, and whether the source's was copied there (it did not exist). */
  secretKeyFile: string;
  secretKeyCopied: boolean;
}

export interface MigrateDeps {
  /** Epoch milliseconds. */
  clock: () => number;
  logger: Logger;
  /** Who runs `gateway admin`, by OS account, for the audit line. */
  operator: OperatorActor;
}

/**
 * Copies into `to` what `from` holds worth carrying at `now`. AdminError 'store_not_empty', and
 * nothing written, when `to` holds a developer. Both stores must hash secrets with one key
 * (`migrate` sees to it).
 */
export async function migrateStore(from: Store, to: Store, now: number): Promise<MigrationCounts> {
  await requireEmpty(to);
  const data = await from.exportData(now);
  try {
    await to.importData(data, now);
  } catch (err) {
    // Redis writes in batches, developers first: a failure part-way leaves some of the data, and a second try would be refused.
    const first = data.developers[0];
    if (first !== undefined && (await to.accounts.findDeveloperById(first.id).catch(() => undefined)) !== undefined) {
      throw new AdminError('migration_incomplete', `the migration failed part-way (${(err as Error).message}); the target store holds part of the data: empty it before trying again`);
    }
    // The driver's own check, made with its first write: someone wrote to the target since requireEmpty.
    if (err instanceof StoreError) throw new AdminError('store_not_empty', `the target store refused the data: ${err.message}`);
    throw err;
  }
  return { developers: data.developers.length, apps: data.apps.length, credentials: data.credentials.length, tokens: data.tokens.length, signingKeys: data.signingKeys.length };
}

/**
 * The whole command: checks both stores and key files before it changes anything, gives the
 * target the source's key file where it has none, and migrates.
 */
export async function migrate(deps: MigrateDeps, from: StoreSettings, to: StoreSettings): Promise<MigrationResult> {
  if (sameStore(from, to)) throw new AdminError('same_store', 'the source and the target are the same store');
  // Opening a SQLite store creates its file: a mistyped path would migrate an empty store.
  if (from.driver === 'sqlite' && !existsSync(from.path)) throw new AdminError('no_source', `no database at ${from.path}`);
  if (!existsSync(from.secretKeyFile)) {
    throw new AdminError('no_secret_key', `no secret key file at ${from.secretKeyFile}: without it no app secret of the source verifies anywhere`);
  }
  const key = loadSecretKey(from.secretKeyFile);
  const copyKey = !existsSync(to.secretKeyFile);
  if (!copyKey) requireSameKey(to.secretKeyFile, key, from.secretKeyFile);
  const fingerprint = keyFingerprint(key);

  const source = await openStore(from);
  try {
    if (!(await source.claimSecretKey(fingerprint))) {
      throw new AdminError('other_secret_key', `${from.secretKeyFile} is not the secret key the source store's app secrets are hashed with`);
    }
    const target = await openStore(to);
    try {
      await requireEmpty(target);
      // A Redis store records the key of the gateways that used it, even once emptied.
      if (!(await target.claimSecretKey(fingerprint))) {
        throw new AdminError('other_secret_key', `the target store was used with another secret key than ${from.secretKeyFile}: migrate into another store (or key prefix)`);
      }
      if (copyKey) copyKeyFile(from.secretKeyFile, to.secretKeyFile, key);
      const counts = await migrateStore(source, target, deps.clock());
      audit(deps.logger, 'store.migrate', { actor: deps.operator, from: storeRef(from), to: storeRef(to), ...counts });
      return { ...counts, secretKeyFile: to.secretKeyFile, secretKeyCopied: copyKey };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

async function requireEmpty(store: Store): Promise<void> {
  const developers = await store.accounts.listDevelopers();
  if (developers.length > 0) {
    throw new AdminError('store_not_empty', `the target store is not empty: it holds ${developers.length} developer${developers.length === 1 ? '' : 's'}; migrate into an empty store`);
  }
}

function requireSameKey(file: string, key: KeyObject, sourceFile: string): void {
  if (!loadSecretKey(file).equals(key)) {
    throw new AdminError(
      'other_secret_key',
      `${file} holds another secret key than ${sourceFile}: the migrated app secrets would not verify with it; remove it (the source's is then copied there) or name the source's key file`,
    );
  }
}

/** Copies the key file as loadSecretKey writes one: whole (aside, then linked into place) and private (0600, in a 0700 folder). */
function copyKeyFile(from: string, to: string, key: KeyObject): void {
  createPrivateFolder(path.dirname(to));
  const aside = `${to}.${process.pid}.${randomBytes(6).toString('hex')}`;
  createPrivateFile(aside);
  try {
    writeFileSync(aside, readFileSync(from));
    linkSync(aside, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Made meanwhile (a gateway started on the target makes one): it must hold the same key.
    requireSameKey(to, key, from);
  } finally {
    unlinkSync(aside);
  }
}

function sameStore(a: StoreSettings, b: StoreSettings): boolean {
  if (a.driver === 'sqlite' && b.driver === 'sqlite') return path.resolve(a.path) === path.resolve(b.path);
  if (a.driver === 'redis' && b.driver === 'redis') return a.keyPrefix === b.keyPrefix && JSON.stringify(a.connection) === JSON.stringify(b.connection);
  return false;
}

/** The store as the audit line names it. */
function storeRef(s: StoreSettings): StoreRef {
  return s.driver === 'sqlite' ? { driver: 'sqlite', path: s.path } : { driver: 'redis', keyPrefix: s.keyPrefix };
}
