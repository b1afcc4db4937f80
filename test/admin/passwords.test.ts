// Portal password hashing: scrypt round trip, the same cost for an account without a password,
// and a bounded amount of work at once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createPasswords } from '../../src/admin/passwords.ts';
import { GatewayError } from '../../src/errors.ts';

describe('passwords', () => {
  test('hashes with scrypt and a fresh salt; verifies; refuses a wrong, missing or unreadable hash', async () => {
    const passwords = createPasswords();
    const a = await passwords.hash('correct horse battery');
    const b = await passwords.hash('correct horse battery');
    assert.match(a, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, b, 'a fresh salt each time');
    assert.equal(await passwords.verify('correct horse battery', a), true);
    assert.equal(await passwords.verify('correct horse batterY', a), false);
    assert.equal(await passwords.verify('', null), false, 'no password set');
    assert.equal(await passwords.verify('x', undefined), false, 'no account');
    assert.equal(await passwords.verify('x', 'md5$abc'), false, 'not ours');
  });

  test('password-hash-flood: beyond the running derivations and the queue, 503 at once', async () => {
    const passwords = createPasswords({ running: 1, queue: 1 });
    const results = await Promise.allSettled([passwords.hash('one two three'), passwords.hash('four five six'), passwords.hash('seven eight')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'rejected'],
    );
    const reason = (results[2] as PromiseRejectedResult).reason;
    assert.ok(reason instanceof GatewayError && reason.status === 503 && reason.headers?.['retry-after'] === '1');
    assert.equal(await passwords.verify('one two three', (results[0] as PromiseFulfilledResult<string>).value), true, 'the slots were handed back');
  });
});
