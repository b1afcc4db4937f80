// docs/management-api.md and the generated client's types are what the management API's document
// says now; the page names each operation with its scope, its body's fields and its refusals.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { MANAGEMENT_CLIENT, managementClientSource } from '../../scripts/management-client.ts';
import { MANAGEMENT_SCOPES } from '../../src/admin/management-clients.ts';
import { managementDocument } from '../../src/management/document.ts';
import { managementReference } from '../../src/management/reference.ts';

const ROOT = path.join(import.meta.dirname, '..', '..');

test('docs/management-api.md is what the document says now', () => {
  const committed = readFileSync(path.join(ROOT, 'docs', 'management-api.md'), 'utf8');
  assert.ok(committed === managementReference(), 'docs/management-api.md is stale: run `npm run docs:management` and commit it');
});

test('test/management/generated/api.ts is what openapi-typescript makes of the document now', async () => {
  const committed = readFileSync(MANAGEMENT_CLIENT, 'utf8');
  assert.ok(committed === (await managementClientSource()), 'test/management/generated/api.ts is stale: run `npm run docs:management` and commit it');
});

test('the page has every operation once, with its scope', () => {
  const page = managementReference();
  const headings = [...page.matchAll(/^### `([A-Z]+ \S+)`$/gm)].map((m) => m[1]);
  const operations = Object.entries(managementDocument.paths).flatMap(([p, item]) =>
    Object.keys(item)
      .filter((k) => k !== 'parameters')
      .map((method) => `${method.toUpperCase()} /v1${p}`),
  );
  assert.deepEqual([...headings].sort(), [...operations].sort());
  assert.match(
    page,
    /^### `POST \/v1\/apps\/\{app\}\/keys\/import`\n\nRegister a key and secret made by another gateway \(Apigee, Kong\): the client keeps working unchanged\.\n\nScope: `keys:write`\. Operation id: `importKey`\.$/m,
  );
});

test('a body is described field by field, following $refs into allOf and oneOf', () => {
  const page = managementReference();
  assert.match(page, /^\| `key` \| string, matching `\^\[A-Za-z0-9\]\[A-Za-z0-9\._~-\]\{7,254\}\$` \| yes \| The client id the other gateway issued\. \|$/m);
  assert.match(page, /^\| `secret` \| string, 16 to 512 characters \| yes \| Its secret: hashed at once, never stored, logged or returned\. \|$/m);
  assert.match(page, /^\| `validDays` \| integer, 1 to 90, default `7` \| no \| {2}\|$/m);
  // App is AppFields and its credentials.
  const app = page.slice(page.indexOf('### Schema `App`\n'), page.indexOf('### Schema `CreatedApp`'));
  assert.match(app, /^\| `developerEmail` \| string \| yes \| {2}\|$/m);
  assert.match(app, /^\| `credentials` \| array of \[`Credential`\]\(#schema-credential\) \| yes \| {2}\|$/m);
  // TokenRevocation is one of two shapes.
  assert.match(
    page,
    /Request body \[`TokenRevocation`\]\(#schema-tokenrevocation\) \(`application\/json`, required\):\n\nExactly one of:\n\n.*\n.*\n\| `app` \| string \| yes \| The app's id\. \|\n\nor:\n/,
  );
});

test('responses name their schema and headers; refusals their statuses; the codes their status', () => {
  const page = managementReference();
  assert.match(
    page,
    /^\| 201 \| \[`CreatedApp`\]\(#schema-createdapp\) \(`application\/json`\) \| `Idempotent-Replayed` \| The app with its key and secret\. \|\n\nRefusals \(\[problem\+json\]\(#errors\)\): 400, 401, 403, 404, 409, 422\.$/m,
  );
  assert.match(page, /^\| 204 \| none \| {2}\| Deleted\. \|$/m);
  assert.match(page, /^\| `key_taken` \| 409 \| /m);
  assert.match(page, /^\| `unknown_developer` \| 404 \| /m);
  assert.match(page, /^\| `invalid_secret` \| 400 \| /m);
  assert.match(page, /^\| `usage:read` \| Read calls per app, product, route and status class per hour\. \|$/m);
});

/** Each code of a table with its status: rows of `status | codes` in the guide, of `code | status | meaning` in the reference. */
function codeStatuses(text: string, row: RegExp, order: 'status-first' | 'code-first'): Map<string, number> {
  const found = new Map<string, number>();
  for (const m of text.matchAll(row)) {
    const [status, codes] = order === 'status-first' ? [m[1]!, m[2]!] : [m[2]!, m[1]!];
    for (const c of codes.matchAll(/`([a-z_]+)`/g)) found.set(c[1]!, Number(status));
  }
  return found;
}

test("the guide's tables say what the reference says: every scope, every code with its status", () => {
  const guide = readFileSync(path.join(ROOT, 'docs', 'management.md'), 'utf8');
  const scopes = [...guide.matchAll(/^\| `([a-z]+:[a-z]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(scopes, Object.keys(MANAGEMENT_SCOPES));
  const inGuide = codeStatuses(guide, /^\| (\d{3}) \| (.*) \|$/gm, 'status-first');
  const inReference = codeStatuses(managementReference(), /^\| (`[a-z_]+`) \| (\d{3}) \|/gm, 'code-first');
  assert.ok(inReference.size > 20);
  assert.deepEqual([...inGuide].sort(), [...inReference].sort());
});
