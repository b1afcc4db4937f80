// The export's CSV cells: quoted as RFC 4180 asks, and a text a spreadsheet would run as a formula
// kept as text, also where a spreadsheet of another locale splits a cell at ; or |.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvField } from '../../src/cli/usage.ts';

test('formulas kept as text at the start and after ; or |, fullwidth ones too; quotes, commas and line ends quoted', () => {
  assert.deepEqual(['alpha', '=SUM(1,2)', '+cmd', '-2+3', '@SUM(A1)', ' =1', "x;=cmd|' /C calc'!A0;y", 'a|+b', '＝1+1', 'say "hi"', 'orders-list', 'a-b@example.com', 7].map(csvField), [
    'alpha',
    `"'=SUM(1,2)"`,
    "'+cmd",
    "'-2+3",
    "'@SUM(A1)",
    "' =1",
    "x;'=cmd|' /C calc'!A0;y",
    "a|'+b",
    "'＝1+1",
    '"say ""hi"""',
    'orders-list',
    'a-b@example.com',
    '7',
  ]);
});
