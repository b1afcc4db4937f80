import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { GENERATED, generatedAssets } from '../../scripts/portal-assets.ts';

describe('portal assets', () => {
  test('src/portal/browser/generated.ts is what scripts/portal-assets.ts makes of portal.ts and portal.css', () => {
    assert.ok(readFileSync(GENERATED, 'utf8') === generatedAssets(), 'stale: run `node --import tsx scripts/portal-assets.ts`');
  });
});
