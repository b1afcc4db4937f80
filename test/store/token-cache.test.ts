// The token cache on its own, over a driver that counts its reads: a change evicts exactly what it
// names, and costs the same however many tokens are cached (a revocation of one's own token, which
// anyone with an app can make at will, must not make every instance walk its whole cache).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ActiveToken, Change, StoreDriver } from '../../src/store/port/index.ts';
import { TokenCache } from '../../src/store/token-cache.ts';

const NOW = 1_700_000_000_000;

/** A driver whose tokens are made up from their hash: token i is of family f<i>, app a<i % apps>, key k<i % apps>, developer d<i % 2>. */
function fakeDriver(apps: number) {
  let listener: (change: Change) => void = () => {};
  const reads: number[] = [];
  const driver = {
    tokens: {
      findAccessToken(hash: Buffer): ActiveToken {
        const i = hash.readUInt32BE(0);
        reads.push(i);
        return {
          hash,
          kind: 'access',
          family: `f${i}`,
          appId: `a${i % apps}`,
          key: `k${i % apps}`,
          developerEmail: `d${i % 2}`,
          appName: 'app',
          product: 'p',
          scope: '',
          subject: null,
          issuedAt: NOW,
          expiresAt: NOW + 3_600_000,
        };
      },
    },
    apps: {},
    changes: { listen: (l: (change: Change) => void) => (listener = l), catchUp() {} },
  } as unknown as Pick<StoreDriver, 'tokens' | 'apps' | 'changes'>;
  return { driver, reads, tell: (change: Change) => listener(change) };
}

const hashOf = (i: number) => {
  const b = Buffer.alloc(32);
  b.writeUInt32BE(i);
  return b;
};

describe('TokenCache', () => {
  test('a change evicts exactly the tokens it names: the family, the app, the key or the developer', () => {
    const { driver, reads, tell } = fakeDriver(10);
    const cache = new TokenCache(driver, { size: 1000 });
    const all = () => {
      reads.length = 0;
      for (let i = 0; i < 100; i++) cache.findAccessToken(hashOf(i), NOW);
      return [...reads];
    };
    assert.equal(all().length, 100);
    assert.deepEqual(all(), [], 'all cached');
    tell({ kind: 'family', ref: 'f7' });
    assert.deepEqual(all(), [7]);
    tell({ kind: 'app', ref: 'a3' });
    assert.deepEqual(all(), [3, 13, 23, 33, 43, 53, 63, 73, 83, 93]);
    tell({ kind: 'key', ref: 'k4' });
    assert.deepEqual(all(), [4, 14, 24, 34, 44, 54, 64, 74, 84, 94]);
    tell({ kind: 'developer', ref: 'd1' });
    assert.deepEqual(
      all(),
      Array.from({ length: 50 }, (_, i) => 2 * i + 1),
    );
    tell({ kind: 'family', ref: 'no such family' });
    assert.deepEqual(all(), []);
    tell({ kind: 'everything' });
    assert.equal(all().length, 100);
  });

  test('a token pushed out by the size bound, or expired, is no longer evicted by name (nor kept in an index)', () => {
    const { driver, reads, tell } = fakeDriver(1);
    const cache = new TokenCache(driver, { size: 2 });
    for (const i of [0, 1, 2]) cache.findAccessToken(hashOf(i), NOW);
    reads.length = 0;
    cache.findAccessToken(hashOf(0), NOW);
    assert.deepEqual(reads, [0], 'the oldest went when the third came');
    tell({ kind: 'app', ref: 'a0' });
    reads.length = 0;
    for (const i of [1, 2]) cache.findAccessToken(hashOf(i), NOW);
    assert.deepEqual(reads, [1, 2]);
    assert.equal(cache.findAccessToken(hashOf(1), NOW + 3_600_000), undefined, 'expired');
  });

  test('with 100,000 tokens cached, 20,000 revocations of single families take well under a second (each once walked the whole cache)', () => {
    const { driver, tell } = fakeDriver(1000);
    const cache = new TokenCache(driver, { size: 100_000 });
    for (let i = 0; i < 100_000; i++) cache.findAccessToken(hashOf(i), NOW);
    const since = performance.now();
    for (let i = 0; i < 20_000; i++) tell({ kind: 'family', ref: `f${100_000 + i}` });
    const ms = performance.now() - since;
    assert.ok(ms < 1000, `took ${Math.round(ms)} ms`);
  });
});
