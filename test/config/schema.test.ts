import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { withDefaults } from '../../src/config/defaults.ts';
import { configSchema, editorSchema } from '../../src/config/schema.ts';
import { policySchema } from '../../src/policies/index.ts';

test('the published editor schema is the schema the loader validates with', () => {
  const published = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'gateway.schema.json'), 'utf8'));
  assert.deepEqual(published, editorSchema(), 'run `npx gateway config schema > gateway.schema.json`');
});

/** What the defaults test reads of the filled config. */
interface Filled {
  listen: { host: string };
  upstreams: { u: { healthCheck: unknown } };
  admin: unknown;
  routes: { r: { requireSubject: boolean; policies: [{ spikeArrest: unknown }] } };
}

interface Node {
  description?: string;
  properties?: Record<string, Node>;
  patternProperties?: Record<string, Node>;
  items?: Node;
  anyOf?: Node[];
}

/** Every property below `node`, with its path. */
function* properties(node: Node, at: string): Generator<[string, Node]> {
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    yield [`${at}.${key}`, child];
    yield* properties(child, `${at}.${key}`);
  }
  for (const child of Object.values(node.patternProperties ?? {})) yield* properties(child, `${at}.<name>`);
  if (node.items !== undefined) yield* properties(node.items, `${at}[]`);
  for (const [i, branch] of (node.anyOf ?? []).entries()) yield* properties(branch, `${at}|${i}`);
}

test('every option in the schema has a description', () => {
  const all = [...properties(editorSchema() as Node, '')];
  assert.ok(all.length > 150, `only ${all.length} options: the walk misses some`);
  const missing = all.filter(([, node]) => typeof node.description !== 'string' || node.description.length < 8).map(([at]) => at.slice(1));
  assert.deepEqual(missing, []);
});

test('defaults go into a new object: the input is left as it was, and policy options as written', () => {
  const options = { rate: '10ps' };
  const raw = { listen: { port: 1 }, upstreams: { u: { url: 'http://127.0.0.1:9' } }, products: {}, routes: { r: { method: 'GET', path: '/', upstream: 'u', policies: [{ spikeArrest: options }] } } };
  const before = structuredClone(raw);
  const filled = withDefaults(configSchema, raw, new Set([policySchema])) as unknown as Filled;
  assert.deepEqual(raw, before);
  assert.equal(filled.listen.host, '0.0.0.0');
  assert.deepEqual(filled.upstreams.u.healthCheck, { failures: 3, cooldown: '10s' });
  assert.deepEqual(filled.admin, { host: '127.0.0.1', port: 9901 });
  assert.equal(filled.routes.r.requireSubject, false);
  assert.equal(filled.routes.r.policies[0].spikeArrest, options, 'the same object: what a policy compiled at load is found again by it');
  assert.notEqual(filled.routes.r, raw.routes.r);
});
