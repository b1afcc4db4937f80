// The summary the portal shows per app and `gateway admin usage` per product: counts by status
// class and route, the error rate, and percentiles read from the duration buckets as Prometheus's
// histogram_quantile reads a histogram.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { percentile, summarize, type UsageRow } from '../../src/admin/usage.ts';
import { inBucket } from '../store/contract/fixture.ts';

test('percentile: linear within the bucket the rank falls in; the last bound for the slowest bucket; none without durations', () => {
  // Ten calls between 2.5 and 5 ms.
  assert.equal(percentile(inBucket(2, 10), 0.5), 3.75);
  assert.equal(percentile(inBucket(2, 10), 0.95), 4.875);
  // Ten up to 1 ms, ten over 10 s.
  const split = inBucket(0, 10).map((n, b) => (b === 13 ? 10 : n));
  assert.equal(percentile(split, 0.5), 1);
  assert.equal(percentile(split, 0.95), 10_000);
  assert.equal(percentile(inBucket(0, 0), 0.5), undefined);
});

test('summarize: calls by status class and by route (the busiest first), the share answered 4xx or 5xx, p50 and p95', () => {
  const row = (route: string, statusClass: UsageRow['statusClass'], count: number, bucket: number): UsageRow => ({
    hour: 0,
    app: 'a',
    product: 'p',
    route,
    statusClass,
    count,
    latency: inBucket(bucket, count),
  });
  assert.deepEqual(summarize([row('list', '2xx', 6, 2), row('get', '4xx', 3, 3), row('list', '5xx', 1, 9)]), {
    calls: 10,
    byStatus: { '1xx': 0, '2xx': 6, '3xx': 0, '4xx': 3, '5xx': 1 },
    byRoute: [
      { route: 'list', calls: 7, errors: 1 },
      { route: 'get', calls: 3, errors: 3 },
    ],
    errorRate: 0.4,
    // Rank 5 of 10: the fifth of the six calls of 2.5 to 5 ms; rank 9.5: half into the one call of 500 to 1,000 ms.
    p50Ms: 2.5 + 2.5 * (5 / 6),
    p95Ms: 750,
  });
  assert.deepEqual(summarize([]), { calls: 0, byStatus: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }, byRoute: [], errorRate: 0, p50Ms: undefined, p95Ms: undefined });
});
