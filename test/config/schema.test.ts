import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { editorSchema } from '../../src/config/schema.ts';

test('the published editor schema is the schema the loader validates with', () => {
  const published = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'gateway.schema.json'), 'utf8'));
  assert.deepEqual(published, editorSchema(), 'run `npx gateway config schema > gateway.schema.json`');
});
