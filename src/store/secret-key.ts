// The key of the keyed hash that app secrets are stored under. It lives in its own file, apart
// from the database, so a copy of the database alone cannot be used to test guesses.
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** Made a KeyObject once: building one from bytes on every HMAC costs more than the HMAC. */
export function loadSecretKey(file: string): KeyObject {
  try {
    return parseKey(file, readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  // Written aside, then linked into place: the file appears whole, so that another process (or a
  // worker thread) starting at the same moment never reads it empty.
  const aside = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(aside, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(aside, file);
  } catch (err) {
    // Another process created it first; use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(aside);
  }
  return parseKey(file, readFileSync(file, 'utf8'));
}

function parseKey(file: string, text: string): KeyObject {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length < 32) throw new Error(`${file}: the secret key must hold at least 32 bytes, base64-encoded`);
  return createSecretKey(key);
}

/** A public fingerprint of the key: tells two keys apart, and says nothing of either. */
export function keyFingerprint(key: KeyObject): string {
  return createHmac('sha256', key).update('token gateway secret key fingerprint').digest('base64url');
}
