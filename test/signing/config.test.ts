// What the config refuses of signed tokens, with the YAML path and line: a JWT without an issuer,
// `token` for opaque tokens, durations that would let a token outlive its key in the JWKS.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.ts';
import { configYaml } from '../helpers.ts';

function errors(parts: Parameters<typeof configYaml>[0]): { text: string; lines: string[] } {
  const text = configYaml(parts);
  try {
    parseConfig(text, '/tmp/gateway.yaml', { env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return { text, lines: err.message.split('\n') };
    throw err;
  }
  assert.fail('the configuration loaded');
}

const lineOf = (text: string, needle: string, from = 0) => text.slice(0, text.indexOf(needle, from)).split('\n').length;

describe('config: signed tokens', () => {
  test('a JWT product, or an identity token, needs oauth.issuer', () => {
    const { text, lines } = errors({ products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt\n    upstreamIdentity: jwt' });
    assert.deepEqual(lines, [
      `products.signed.accessTokenFormat: a signed token names its issuer: set oauth.issuer (the gateway's address as clients reach it) (gateway.yaml:${lineOf(text, 'accessTokenFormat: jwt')})`,
      `products.signed.upstreamIdentity: a signed token names its issuer: set oauth.issuer (the gateway's address as clients reach it) (gateway.yaml:${lineOf(text, 'upstreamIdentity: jwt')})`,
    ]);
  });

  test('upstreamIdentity: token needs JWT access tokens, on a product and on a route', () => {
    const product = errors({ oauth: '  issuer: https://api.example.com', products: '  signed:\n    routes: [hello]\n    upstreamIdentity: token' });
    assert.deepEqual(product.lines, [
      `products.signed.upstreamIdentity: token forwards the caller's JWT access token: set accessTokenFormat: jwt (gateway.yaml:${lineOf(product.text, 'upstreamIdentity: token')})`,
    ]);
    const route = errors({
      oauth: '  issuer: https://api.example.com',
      routes: '  forward:\n    method: GET\n    path: /v1/forward\n    upstream: echo\n    upstreamIdentity: token',
      products: '  signed:\n    routes: [forward]\n    accessTokenFormat: jwt\n  plain:\n    routes: [forward]',
    });
    assert.deepEqual(route.lines, [
      `routes.forward.upstreamIdentity: token forwards the caller's JWT access token, and product "plain" issues opaque ones: set its accessTokenFormat: jwt (gateway.yaml:${lineOf(route.text, 'upstreamIdentity: token')})`,
    ]);
  });

  test('the durations: rotateEvery longer than publishAhead, retireAfter at least the longest JWT lifetime and a minute', () => {
    const { text, lines } = errors({
      oauth: '  issuer: https://api.example.com\n  signing:\n    rotateEvery: 1h\n    publishAhead: 2h\n    retireAfter: 10m',
      products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt\n    accessTokenLifetime: 30m',
    });
    assert.deepEqual(lines, [
      `oauth.signing.rotateEvery: must be longer than publishAhead: the next key is published publishAhead before it signs (gateway.yaml:${lineOf(text, 'rotateEvery: 1h')})`,
      `oauth.signing.retireAfter: must be at least 1860s: the longest JWT lifetime and a minute of clock skew, so that no token outlives its key in the JWKS (gateway.yaml:${lineOf(text, 'retireAfter: 10m')})`,
    ]);
  });

  test('an algorithm the gateway does not sign with (no HMAC: a key others verify with must be public)', () => {
    const { text, lines } = errors({ oauth: '  signing:\n    algorithm: HS256' });
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, new RegExp(`^oauth\\.signing\\.algorithm: .*ES256.*EdDSA.*RS256.* \\(gateway\\.yaml:${lineOf(text, 'algorithm: HS256')}\\)$`));
  });
});
