// The database and the secret key hold every app's secret hash and token digest: only the
// gateway's own user may read them, whatever the umask it was started with.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';

const FOLDER_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * Creates the database's folder (0700) and the database file (0600) when they do not exist yet;
 * SQLite gives the -wal and -shm files the database file's mode. Files made earlier keep their
 * mode: the answer names each that others may read or write, for a warning at start.
 */
export function prepareDatabaseFiles(database: string, keyFile: string): string[] {
  const folder = path.dirname(database);
  createPrivateFolder(folder);
  if (!existsSync(database)) createPrivateFile(database);
  return widerThan([
    [folder, FOLDER_MODE],
    [database, FILE_MODE],
    [`${database}-wal`, FILE_MODE],
    [`${database}-shm`, FILE_MODE],
    [keyFile, FILE_MODE],
  ]);
}

/**
 * The secret key file of a store that is no file (Redis), when others may read or write it: it
 * is copied from machine to machine, where a copy easily gets mode 0644.
 */
export function checkKeyFile(keyFile: string): string[] {
  return widerThan([[keyFile, FILE_MODE]]);
}

/** A warning for each file that exists with more rights for others than `mode` gives. */
function widerThan(files: readonly (readonly [string, number])[]): string[] {
  const wider: string[] = [];
  for (const [file, mode] of files) {
    const found = existsSync(file) ? statSync(file).mode & 0o777 : undefined;
    if (found !== undefined && (found & ~mode & 0o077) !== 0) {
      wider.push(`${file} is readable or writable by others (mode ${found.toString(8).padStart(4, '0')}): chmod ${mode.toString(8)} it`);
    }
  }
  return wider;
}

/** Creates `folder` and its missing parents with mode 0700, when it does not exist. */
export function createPrivateFolder(folder: string): void {
  if (existsSync(folder)) return;
  mkdirSync(folder, { recursive: true, mode: FOLDER_MODE });
  chmodSync(folder, FOLDER_MODE);
}

/** Creates `file` empty with mode 0600 whatever the umask; fails if it exists. */
export function createPrivateFile(file: string): void {
  closeSync(openSync(file, 'wx', FILE_MODE));
  chmodSync(file, FILE_MODE);
}
