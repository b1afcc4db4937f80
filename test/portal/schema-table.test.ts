// The rows of the reference's schema tables (src/portal/schema-reader.ts, SchemaReader) for what the
// pet store document of test/portal/reference.test.ts does not have: allOf, oneOf, a map,
// OpenAPI 3.0's nullable and 3.1's type arrays, an enum without a type, a $ref across files and a
// $ref with a sibling description.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SchemaReader } from '../../src/portal/schema-reader.ts';

const DOC = 'file:///api/doc.yaml';
const COMMON = 'file:///api/common.yaml';

const reader = new SchemaReader({
  files: new Map<string, unknown>([
    [
      DOC,
      {
        components: {
          schemas: {
            Card: { type: 'object', required: ['number'], properties: { number: { type: 'string', pattern: '^[0-9]{16}$' } } },
            Bank: { type: 'object', title: 'Bank account', properties: { iban: { type: 'string' } } },
          },
        },
        payment: {
          allOf: [{ $ref: 'common.yaml#/Base' }, { type: 'object', properties: { note: { type: 'string', nullable: true, description: 'A note' } } }],
          properties: {
            pay: { oneOf: [{ $ref: '#/components/schemas/Card' }, { $ref: '#/components/schemas/Bank' }] },
            labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 10 } },
            count: { type: ['integer', 'null'], exclusiveMinimum: 0 },
            kind: { enum: ['a', 'b'] },
            base: { $ref: 'common.yaml#/Base', description: 'Said here, not there' },
          },
        },
        list: { type: 'array', items: { type: 'integer', minimum: 1 }, minItems: 1, uniqueItems: true },
      },
    ],
    [COMMON, { Base: { type: 'object', description: 'The base', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } } }],
  ]),
});

const rows = (pointer: string) => reader.rows({ $ref: `${DOC}#${pointer}` }).map((r) => [r.path, r.type, r.required, r.description ?? '', r.details.map(String).join('; ')]);

test("allOf's parts in order before the schema's own properties; oneOf's alternatives by title or component name, each one's properties marked; a map's values under *", () => {
  assert.deepEqual(rows('/payment'), [
    ['id', 'string (uuid)', true, '', ''],
    ['note', 'string or null', false, 'A note', ''],
    ['pay', 'one of: Card, Bank account', false, '', ''],
    ['pay.number', 'string', true, '', 'with Card; matches <code>^[0-9]{16}$</code>'],
    ['pay.iban', 'string', false, '', 'with Bank account'],
    ['labels', 'object', false, '', ''],
    ['labels.*', 'string', false, '', 'any other property name; at most 10 characters'],
    ['count', 'integer or null', false, '', 'greater than 0'],
    ['kind', 'string', false, '', 'one of <code>&quot;a&quot;</code>, <code>&quot;b&quot;</code>'],
    ['base', 'object', false, 'Said here, not there', ''],
    ['base.id', 'string (uuid)', true, '', ''],
  ]);
});

test("an array of plain values is one row, its items' constraints in its details", () => {
  assert.deepEqual(rows('/list'), [['(root)', 'array of integer', false, '', 'at least 1 item; items unique; each item: at least 1']]);
});

test('a $ref that points nowhere gives no rows rather than a failure', () => {
  assert.deepEqual(rows('/nothing'), []);
  assert.equal(reader.type({ $ref: `${DOC}#/nothing` }), 'any');
});
