// Compile once: what the load compiles (each OpenAPI document's validators, each validateRequest's
// schemas) the runtime takes from it, rather than compiling again.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { loadConfigFile } from '../../src/config/load.ts';
import type { Config } from '../../src/config/types.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway } from '../../src/host/index.ts';
import { configYaml, tempDir } from '../helpers.ts';

const SHOP = `openapi: 3.0.3
info: { title: Shop, version: '1.0' }
paths:
  /items:
    get:
      operationId: listItems
      parameters:
        - { name: limit, in: query, schema: { type: integer, maximum: 100 } }
      responses: { '200': { description: the items } }
`;

/** Counts the schemas every ajv instance compiles (Ajv and Ajv2020 share one core class). */
function countCompiles(): { readonly count: number; restore(): void } {
  const core = Object.getPrototypeOf(Ajv.prototype) as { compile: (...args: unknown[]) => unknown };
  const original = core.compile;
  const counter = { count: 0, restore: () => (core.compile = original) };
  core.compile = function compile(this: unknown, ...args: unknown[]) {
    counter.count++;
    return original.apply(this, args);
  };
  return counter;
}

test('a load compiles each document and each validateRequest once, and the runtime compiles none of them again', async () => {
  const temp = tempDir();
  writeFileSync(path.join(temp.dir, 'shop.yaml'), SHOP);
  const file = path.join(temp.dir, 'gateway.yaml');
  writeFileSync(
    file,
    configYaml({
      routes:
        '  search:\n    method: GET\n    path: /v1/search\n    upstream: mock\n    policies:\n      - validateRequest:\n          query: { type: object, properties: { q: { type: string, minLength: 2 } }, required: [q] }\n',
      products: '  shop:\n    openapi: [shop]\n    routes: [search]\n',
      extra: 'openapi:\n  shop:\n    file: shop.yaml\n    upstream: mock\n    basePath: /shop\n',
    }),
  );
  loadConfigFile(file, { env: {} }); // the config file's own validator compiles on the first load
  const compiles = countCompiles();
  let config: Config;
  let atLoad: number;
  try {
    config = loadConfigFile(file, { env: {} });
    atLoad = compiles.count;
    const gateway = await startGateway({ config, logger: createLogger('silent', new Writable({ write: (_c, _e, done) => done() })) });
    await gateway.close();
  } finally {
    compiles.restore();
    temp.remove();
  }
  // validateRequest's query schema and the operation's parameters, each stopping at its first
  // failure; the checks that list every failure compile when an input first fails.
  assert.equal(atLoad, 2);
  assert.equal(compiles.count, atLoad, 'the runtime compiled a schema the load had compiled');
});
