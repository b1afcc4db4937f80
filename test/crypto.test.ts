import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newKey, newSecret, newToken, PREFIX, sha256, tokenDigest } from '../src/crypto.ts';

test('app keys are 32 letters and digits, never starting with "-" (they are CLI arguments)', () => {
  const keys = new Set(Array.from({ length: 2000 }, newKey));
  assert.equal(keys.size, 2000);
  for (const key of keys) assert.match(key, /^[A-Za-z0-9]{32}$/);
});

test('secrets carry their prefix and 256 bits', () => {
  assert.match(newSecret(), /^gws_[A-Za-z0-9_-]{43}$/);
});

test('a token digest is its time-ordered id, then the SHA-256 of the whole token', () => {
  const before = Date.now();
  const { token, digest } = newToken(PREFIX.access);
  assert.match(token, /^gwat_[A-Za-z0-9_-]{64}$/);
  assert.equal(digest.length, 48);
  assert.ok(digest.readUIntBE(0, 6) >= before && digest.readUIntBE(0, 6) <= Date.now(), 'starts with the issue time in ms');
  assert.ok(digest.subarray(16).equals(sha256(token)));
  assert.ok(tokenDigest(PREFIX.access, token)?.equals(digest));
  const later = newToken(PREFIX.access);
  assert.ok(Buffer.compare(digest.subarray(0, 6), later.digest.subarray(0, 6)) <= 0, 'ids sort by time');
});

test('tokenDigest refuses what cannot be one of our tokens', () => {
  const { token } = newToken(PREFIX.refresh);
  assert.equal(tokenDigest(PREFIX.access, token), undefined, 'another kind');
  assert.equal(tokenDigest(PREFIX.refresh, token.slice(0, -1)), undefined, 'too short');
  assert.equal(tokenDigest(PREFIX.refresh, `${token}A`), undefined, 'too long');
  assert.equal(tokenDigest(PREFIX.refresh, `${token.slice(0, -2)}!!`), undefined, 'not base64url');
});
