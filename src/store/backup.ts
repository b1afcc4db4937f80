// Hot backup of the SQLite store with SQLite's online backup API, while gateways keep serving
// from it. The copy is consistent (one snapshot of the database), private (0600) and whole: it is
// written aside and only moved into place once complete. The secret key file goes with it,
// because without it no app secret in the copy verifies.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { backup, DatabaseSync } from 'node:sqlite';
import { createPrivateFile, createPrivateFolder } from './files.ts';

/** A backup refused or failed for a reason the operator can act on; the message is one line. */
export class BackupError extends Error {
  override readonly name = 'BackupError';
}

export interface BackupOptions {
  /** The live store's secret key file (`store.secretKeyFile`). */
  keyFile: string;
  /** Replace a copy (and its key file) that exists; never the live store. */
  force?: boolean;
  /** Pages copied per step of the backup. */
  rate?: number;
}

export interface BackupResult {
  pages: number;
  /** `<to>.key`: the key file a config whose `store.path` is the copy uses when it names none. */
  keyFile: string;
}

// 1 MiB per step at SQLite's default page size of 4 KiB.
const DEFAULT_RATE = 256;

/** Copies the live database `from` to `to`, and its key file to `<to>.key`. */
export async function backupDatabase(from: string, to: string, options: BackupOptions): Promise<BackupResult> {
  const rate = options.rate ?? DEFAULT_RATE;
  if (!Number.isInteger(rate) || rate < 1) throw new TypeError('backupDatabase: rate must be a positive integer');
  const copy = path.resolve(to);
  const copyKey = `${copy}.key`;
  if (!existsSync(from)) throw new BackupError(`no database at ${from}`);
  if (!existsSync(options.keyFile)) throw new BackupError(`no secret key file at ${options.keyFile}; a copy without it verifies no app secret`);
  for (const [file, live] of [
    [copy, from],
    [copy, options.keyFile],
    [copyKey, from],
    [copyKey, options.keyFile],
  ] as const) {
    if (sameFile(file, live)) throw new BackupError(`${file} is the live store's own file; name another`);
  }
  // A log left beside `to` would be replayed onto the new copy by the next SQLite that opens it.
  const logs = [`${copy}-wal`, `${copy}-journal`];
  if (options.force !== true) {
    for (const file of [copy, copyKey, ...logs]) {
      if (existsSync(file)) throw new BackupError(`${file} exists; name another file, or pass --force to replace it`);
    }
  }

  const folder = path.dirname(copy);
  createPrivateFolder(folder);
  const aside = (file: string) => `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const copyAside = aside(copy);
  const keyAside = aside(copyKey);
  try {
    const pages = await copyDatabase(from, copyAside, rate);
    createPrivateFile(keyAside);
    writeFileSync(keyAside, readFileSync(options.keyFile));
    syncFile(keyAside);
    // The key first: the copy never appears without it.
    moveIntoPlace(keyAside, copyKey, options.force === true);
    if (options.force === true) for (const file of [...logs, `${copy}-shm`]) rmSync(file, { force: true });
    moveIntoPlace(copyAside, copy, options.force === true);
    syncFile(folder);
    return { pages, keyFile: copyKey };
  } catch (err) {
    if (err instanceof BackupError || err instanceof TypeError) throw err;
    throw new BackupError(`backup of ${from} failed: ${(err as Error).message}`);
  } finally {
    for (const file of [copyAside, `${copyAside}-journal`, keyAside]) rmSync(file, { force: true });
  }
}

async function copyDatabase(from: string, to: string, rate: number): Promise<number> {
  // Made first, so that SQLite writes into a 0600 file and gives its journal the same mode.
  createPrivateFile(to);
  // Read-only: a backup never migrates or writes the live store.
  const source = new DatabaseSync(from, { readOnly: true, timeout: 5000 });
  try {
    // One read transaction across every step. Without it each step takes a fresh snapshot, and a
    // commit by another connection (any token issued) restarts the backup from its first page:
    // under a steady flow of tokens it never ends. In WAL mode this reader holds up no writer; the
    // WAL only grows until the backup ends.
    source.exec('BEGIN');
    source.prepare('SELECT count(*) FROM sqlite_schema').get();
    // Steps of `rate` pages, each on libuv's thread pool, so this process's event loop stays free.
    const pages = await backup(source, to, { rate });
    source.exec('COMMIT');
    return pages;
  } finally {
    source.close();
  }
}

/** Without `replace`, a hard link: fails if `to` appeared meanwhile, rather than overwrite it. */
function moveIntoPlace(aside: string, to: string, replace: boolean): void {
  if (replace) {
    renameSync(aside, to);
    return;
  }
  try {
    linkSync(aside, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new BackupError(`${to} exists; name another file, or pass --force to replace it`);
    throw err;
  }
}

function sameFile(a: string, b: string): boolean {
  if (path.resolve(a) === path.resolve(b)) return true;
  const [sa, sb] = [statSync(a, { throwIfNoEntry: false }), statSync(b, { throwIfNoEntry: false })];
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino;
}

/** Flushes a file's contents, or a folder's entries (a rename), to disk. */
function syncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
