// The plain counter and histogram the request path writes are exposed exactly as prom-client's
// own Counter and Histogram would expose the same observations: text, JSON, and added up across
// worker threads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { PlainCounter, PlainHistogram } from '../src/metrics.ts';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const COUNTER = { name: 'c_total', help: 'a counter', labelNames: ['route', 'product', 'status'] as const };
const HISTOGRAM = { name: 'h_seconds', help: 'a histogram', labelNames: ['route'] as const, buckets: BUCKETS };

/** The same calls made on prom-client's metrics and on the plain ones, each in its own registry. */
function observed(calls: readonly (readonly [route: string, product: string, status: string, seconds: number])[]) {
  const native = new Registry();
  const plain = new Registry();
  const counter = new Counter({ ...COUNTER, registers: [native] });
  const histogram = new Histogram({ ...HISTOGRAM, registers: [native] });
  const plainCounter = new PlainCounter({ ...COUNTER, registers: [plain] });
  const plainHistogram = new PlainHistogram({ ...HISTOGRAM, registers: [plain] });
  for (const [route, product, status, seconds] of calls) {
    counter.labels(route, product, status).inc();
    histogram.labels(route).observe(seconds);
    plainCounter.series(route, product, status).inc();
    plainHistogram.series(route).observe(seconds);
  }
  return { native, plain, plainCounter, plainHistogram };
}

const CALLS = [
  ['hello', 'hello', '2xx', 0.0004],
  ['hello', '', '4xx', 0.0005],
  ['search', 'observed', '4xx', 0.0031],
  ['hello', 'hello', '2xx', 0.02],
  ['search', 'observed', '2xx', 31],
  ['(unmatched)', '', '4xx', 0],
  ['a "quoted" \\ route\n', 'p', '5xx', 1],
] as const;

test('the text exposition is byte for byte what prom-client writes for the same observations', async () => {
  const { native, plain } = observed(CALLS);
  const text = await plain.metrics();
  assert.equal(text, await native.metrics());
  assert.match(text, /^h_seconds_bucket\{le="0\.0005",route="hello"\} 2$/m);
  assert.match(text, /^h_seconds_bucket\{le="30",route="search"\} 1$/m);
  assert.match(text, /^h_seconds_bucket\{le="\+Inf",route="search"\} 2$/m);
  assert.match(text, /^c_total\{route="search",product="observed",status="4xx"\} 1$/m);
});

test('the JSON the workers send, and its sum across workers, are what prom-client gives', async () => {
  const first = observed(CALLS);
  const second = observed(CALLS.slice(2));
  // Exemplars are off: prom-client's own values carry an empty `exemplar`, which no one reads.
  const withoutExemplars = (json: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
    json.map((m) => ({
      ...m,
      values: m.values.map((value) => {
        const { exemplar, ...rest } = value as typeof value & { exemplar?: unknown };
        assert.equal(exemplar ?? null, null);
        return rest;
      }),
    }));
  assert.deepEqual(await first.plain.getMetricsAsJSON(), withoutExemplars(await first.native.getMetricsAsJSON()));
  const added = AggregatorRegistry.aggregate([await first.plain.getMetricsAsJSON(), await second.plain.getMetricsAsJSON()]);
  const expected = AggregatorRegistry.aggregate([await first.native.getMetricsAsJSON(), await second.native.getMetricsAsJSON()]);
  assert.equal(await added.metrics(), await expected.metrics());
  assert.match(await added.metrics(), /^c_total\{route="search",product="observed",status="4xx"\} 2$/m);
});

test('a series shows from its first count, in that order; series() gives every caller the same one; reset() zeroes them', async () => {
  const { plain, plainCounter, plainHistogram } = observed([]);
  const unused = plainCounter.series('hello', 'hello', '1xx');
  assert.equal(plainCounter.series('hello', 'hello', '1xx'), unused);
  plainCounter.series('b', '', '2xx').inc();
  plainCounter.series('a', '', '2xx').inc();
  plainHistogram.series('b').observe(0.1);
  assert.deepEqual(
    (await plain.metrics()).split('\n').filter((l) => l.startsWith('c_total') || l.startsWith('h_seconds_count')),
    ['c_total{route="b",product="",status="2xx"} 1', 'c_total{route="a",product="",status="2xx"} 1', 'h_seconds_count{route="b"} 1'],
  );
  plain.resetMetrics();
  assert.equal(await plain.metrics(), '# HELP c_total a counter\n# TYPE c_total counter\n\n# HELP h_seconds a histogram\n# TYPE h_seconds histogram\n');
  plainCounter.series('a', '', '2xx').inc();
  assert.match(await plain.metrics(), /^c_total\{route="a",product="",status="2xx"\} 1$/m);
});
