import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { getHeapSpaceStatistics } from 'node:v8';
import { collectWhenQuiet, GROWTH_BYTES } from '../../src/host/memory.ts';

const TICK = 20;

/** A collector on a 20 ms tick whose collections and heap size the test sees and sets. */
function counted(minIntervalMs = 0) {
  const state = { collections: 0, heap: 10 * 1024 * 1024 };
  const collector = collectWhenQuiet({ quietMs: TICK, minIntervalMs, collect: () => state.collections++, heapBytes: () => state.heap });
  return { state, collector };
}

test('collects once the thread has been quiet for a tick after it started, and not again while nothing grew', async (t) => {
  const { state, collector } = counted();
  t.after(() => collector.stop());
  await sleep(TICK * 6);
  assert.equal(state.collections, 1);
});

test('waits while calls keep coming, and collects at the first quiet tick', async (t) => {
  const { state, collector } = counted();
  t.after(() => collector.stop());
  const calling = setInterval(() => collector.call(), TICK / 4);
  await sleep(TICK * 8);
  clearInterval(calling);
  assert.equal(state.collections, 0);
  await sleep(TICK * 5);
  assert.equal(state.collections, 1);
});

test('collects again after a reload asks for it, or after calls grew the heap by GROWTH_BYTES', async (t) => {
  const { state, collector } = counted();
  t.after(() => collector.stop());
  await sleep(TICK * 4);
  assert.equal(state.collections, 1);
  collector.due();
  await sleep(TICK * 4);
  assert.equal(state.collections, 2);
  state.heap += GROWTH_BYTES - 1;
  await sleep(TICK * 4);
  assert.equal(state.collections, 2);
  state.heap += 1;
  await sleep(TICK * 4);
  assert.equal(state.collections, 3);
});

test('collects at most once per minIntervalMs however the heap grows', async (t) => {
  const { state, collector } = counted(60_000);
  t.after(() => collector.stop());
  await sleep(TICK * 4);
  state.heap += GROWTH_BYTES * 4;
  await sleep(TICK * 6);
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
