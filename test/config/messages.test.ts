// Messages a person can act on, tried as a new user would with small bad files: each says what was
// found, what is allowed (the values, or an example), the YAML path and the line; one message per
// mistake, sorted by line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.ts';

const GOOD = `listen:
  port: 8080
upstreams:
  mock:
    mock: { status: 200 }
routes:
  hello:
    method: GET
    path: /hello
    upstream: mock
products:
  shop:
    routes: [hello]
`;

function messages(text: string): string[] {
  try {
    parseConfig(text, '/srv/gateway/gateway.yaml', { env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.message.split('\n');
    throw err;
  }
  return assert.fail('the configuration loaded');
}

describe('config messages', () => {
  it('the good file loads', () => {
    assert.equal(parseConfig(GOOD, '/srv/gateway/gateway.yaml', { env: {} }).routes.size, 1);
  });

  it('a method names the methods allowed', () => {
    assert.deepEqual(messages(GOOD.replace('method: GET', 'method: FETCH')), ['routes.hello.method: must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, found "FETCH" (gateway.yaml:8)']);
  });

  it('a grant names the grants allowed', () => {
    assert.deepEqual(messages(GOOD.replace('routes: [hello]', 'routes: [hello]\n    grants: [implicit]')), [
      'products.shop.grants[0]: must be one of client_credentials, password, refresh_token, authorization_code, found "implicit" (gateway.yaml:14)',
    ]);
  });

  it('a pattern gives an example, not a regex', () => {
    const text = GOOD.replace('upstream: mock\n', 'upstream: mock\n    policies:\n      - spikeArrest: { rate: 10/s }\n');
    assert.deepEqual(messages(text), ['routes.hello.policies[0].spikeArrest.rate: must be a rate such as 10ps or 600pm, found "10/s" (gateway.yaml:12)']);
    assert.deepEqual(messages(GOOD.replace('path: /hello', 'path: hello')), ['routes.hello.path: must be a path such as /v1/orders or /v1/orders/{id}, found "hello" (gateway.yaml:9)']);
  });

  it('a wrong type echoes the value', () => {
    assert.deepEqual(messages(GOOD.replace('port: 8080', 'port: abc')), ['listen.port: must be an integer, found "abc" (gateway.yaml:2)']);
    assert.deepEqual(messages(GOOD.replace('port: 8080', 'port: 8080\nworkers: many')), ['workers: must be auto or an integer, found "many" (gateway.yaml:3)']);
    assert.deepEqual(messages(GOOD.replace('port: 8080', 'port: 8080\nshutdownTimeout: { seconds: 5 }')), [
      'shutdownTimeout: must be an integer or a duration such as 30s or 5m, found a mapping (gateway.yaml:3)',
    ]);
  });

  it('a misspelled key is one message, with the key it was likely meant to be', () => {
    assert.deepEqual(messages(GOOD.replace('upstream: mock', 'upstrem: mock')), ['routes.hello.upstrem: unknown key; did you mean "upstream"? (gateway.yaml:10)']);
    const policy = GOOD.replace('upstream: mock\n', 'upstream: mock\n    policies:\n      - spikeArest: { rate: 10ps }\n');
    assert.deepEqual(messages(policy), ['routes.hello.policies[0].spikeArest: unknown key; did you mean "spikeArrest"? (gateway.yaml:12)']);
    // Nothing close: the keys allowed.
    const far = GOOD.replace('upstream: mock\n', 'upstream: mock\n    policies:\n      - throttle: { rate: 10ps }\n');
    assert.deepEqual(messages(far), [
      'routes.hello.policies[0].throttle: unknown key (expected one of: quota, spikeArrest, ipAccess, validateRequest, validateResponse, transformResponse, cors) (gateway.yaml:12)',
    ]);
  });

  it('a secret is not echoed', () => {
    const text = GOOD.replace('port: 8080', 'port: 8080\noauth:\n  introspection:\n    clients: [{ id: backend, secret: short }]');
    assert.deepEqual(messages(text), ['oauth.introspection.clients[0].secret: must NOT have fewer than 16 characters (gateway.yaml:5)']);
  });

  it('messages are sorted by line, whatever found them', () => {
    const text = GOOD.replace('port: 8080', 'port: 8080\n  hots: x').replace('method: GET', 'method: get').replace('status: 200', 'status: 99');
    assert.deepEqual(messages(text), [
      'listen.hots: unknown key; did you mean "host"? (gateway.yaml:3)',
      'upstreams.mock.mock.status: must be >= 200, found 99 (gateway.yaml:6)',
      'routes.hello.method: must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, found "get" (gateway.yaml:9)',
    ]);
  });
});
