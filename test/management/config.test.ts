// The `management` section: off unless present, on loopback unless said otherwise, and the name
// of its built-in product kept for it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configError, startTestGateway } from '../helpers.ts';

test('without a management section there is no management listener', async () => {
  const gw = await startTestGateway();
  try {
    assert.equal(gw.gateway.managementUrl, undefined);
  } finally {
    await gw.close();
  }
});

test('the management listener binds loopback by default', async () => {
  const gw = await startTestGateway({ extra: 'management:\n  port: 0\n' });
  try {
    assert.match(gw.gateway.managementUrl!, /^http:\/\/127\.0\.0\.1:\d+$/);
  } finally {
    await gw.close();
  }
});

test('a management section with a missing certificate, a zero token lifetime or an unknown key is refused with its path and line', async () => {
  const bad = await configError({ extra: 'management:\n  port: 0\n  accessTokenLifetime: 0s\n  tls:\n    cert: ./missing.pem\n    key: ./missing-key.pem\n' });
  assert.match(bad, /^management\.accessTokenLifetime: must be at least 1s \(gateway\.yaml:\d+\)\nmanagement\.tls\.cert: cannot read \/.*\/missing\.pem: no such file \(gateway\.yaml:\d+\)$/);
  assert.match(await configError({ extra: 'management:\n  port: 0\n  open: true\n' }), /^management\.open: unknown key \(gateway\.yaml:\d+\)$/);
});

test("a product may not take the management product's name", async () => {
  const message = await configError({ products: '  gateway-management:\n    routes: [hello]\n' });
  assert.match(message, /^products\.gateway-management: this product name is the management API's own: choose another \(gateway\.yaml:\d+\)$/m);
});
