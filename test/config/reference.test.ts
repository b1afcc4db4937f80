import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { configReference } from '../../src/config/reference.ts';

test('docs/configuration.md is what the schema says now', () => {
  const committed = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
  assert.ok(committed === configReference(), 'docs/configuration.md is stale: run `npm run docs:config` and commit it');
});

test('the reference names every option with its default', () => {
  const page = configReference();
  assert.match(page, /^\| `portal\.keyOverlap` \| duration \| `24h` \| After a secret is rotated, the old key and secret keep working this long\. \|$/m);
  assert.match(page, /^\| `routes\.<name>\.method` \| one of `GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE`, `OPTIONS` \| required \| The HTTP method\. \|$/m);
  assert.match(page, /^\| `spikeArrest\.rate` \| rate \(such as `10ps`, `600pm`\) \| required \| /m);
});
