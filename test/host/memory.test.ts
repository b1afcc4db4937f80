import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { getHeapSpaceStatistics } from 'node:v8';
import { collectWhenQuiet, GROWTH_BYTES } from '../../src/host/memory.ts';

/** A collector whose ticks the test makes itself, with its collections and heap size the test sees and sets. */
function counted(minIntervalMs = 0) {
  const state = { collections: 0, heap: 10 * 1024 * 1024 };
  const collector = collectWhenQuiet({ quietMs: 1e9, minIntervalMs, collect: () => state.collections++, heapBytes: () => state.heap });
  return { state, collector };
}

test('collects at the first quiet tick after it started, and not again while nothing grew', (t) => {
  const { state, collector } = counted();
  t.after(() => collector.stop());
  for (let i = 0; i < 5; i++) collector.tick();
  assert.equal(state.collections, 1);
});

test('waits while calls keep coming, and collects at the first tick with none since the last', (t) => {
  const { state, collector } = counted();
  t.after(() => collector.stop());
  for (let i = 0; i < 5; i++) {
    collector.call();
    collector.tick();
  }
  assert.equal(state.collections, 0);
  collector.tick();
  assert.equal(state.collections, 1);
});

test('collects again after a reload asks for it, or after calls grew the heap by GROWTH_BYTES', (t) => {
  const { state, collector } = counted();
  t.after(() => collector.stop());
  collector.tick();
  assert.equal(state.collections, 1);
  collector.due();
  collector.tick();
  assert.equal(state.collections, 2);
  state.heap += GROWTH_BYTES - 1;
  collector.tick();
  assert.equal(state.collections, 2);
  state.heap += 1;
  collector.tick();
  assert.equal(state.collections, 3);
});

test('collects at most once per minIntervalMs however the heap grows', (t) => {
  const { state, collector } = counted(60_000);
  t.after(() => collector.stop());
  collector.tick();
  state.heap += GROWTH_BYTES * 4;
  for (let i = 0; i < 5; i++) collector.tick();
  assert.equal(state.collections, 1);
});

test("V8's collection frees what nothing refers to and gives the young generation back", async (t) => {
  const youngBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;
  // Garbage that survives a few scavenges grows the young generation, as start-up does.
  let keep: unknown[] = [];
  for (let i = 0; i < 200_000; i++) {
    keep.push({ i, text: `item ${i}` });
    if (keep.length > 50_000) keep = [];
  }
  let target: object | undefined = { some: 'object' };
  const weak = new WeakRef(target);
  target = undefined;
  keep = [];
  const grown = youngBytes();
  const collector = collectWhenQuiet({ quietMs: 50 });
  t.after(() => collector.stop());
  await sleep(400);
  assert.equal(weak.deref(), undefined);
  assert.ok(youngBytes() <= Math.min(grown, 2 * 1024 * 1024), `new space ${youngBytes()} bytes, ${grown} before`);
});
