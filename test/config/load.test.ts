// The configuration loader: YAML → environment substitution → schema → cross-section checks →
// a frozen Config with defaults filled in. Every error names the YAML path and the line; expected
// line numbers are computed from the text each test writes, so a wrong line fails the test.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfigFile, parseConfig, type Config } from '../../src/config/load.ts';
import { configYaml, tempDir } from '../helpers.ts';

/** oauth.signing when the file says nothing: nothing signs, keys rotate monthly and are published an hour ahead. */
const SIGNING_DEFAULTS = {
  algorithm: 'ES256',
  rotateEveryMs: 30 * 86_400_000,
  publishAheadMs: 3_600_000,
  retireAfterMs: 60_000,
  identity: { header: 'x-gateway-identity', lifetime: 60 },
  used: false,
};

/** oauth.dpop when the file says nothing: a proof is good for a minute, no nonces. */
const DPOP_DEFAULTS = { maxAgeMs: 60_000, nonce: false };

const FILE = '/srv/gateway/gateway.yaml';
const EXAMPLE = path.join(import.meta.dirname, '..', '..', 'gateway.example.yaml');
const REDIS_EXAMPLE = path.join(import.meta.dirname, '..', '..', 'gateway.redis.example.yaml');

/** 1-based line of the only line of `text` that contains `needle`. */
function lineOf(text: string, needle: string): number {
  const hits = text.split('\n').flatMap((line, i) => (line.includes(needle) ? [i + 1] : []));
  assert.equal(hits.length, 1, `test bug: ${JSON.stringify(needle)} must occur on exactly one line, found on ${hits.length}`);
  return hits[0]!;
}

/** 1-based line of the `n`th line of `text` containing `needle`. */
function nthLine(text: string, needle: string, n: number): number {
  const hits = text.split('\n').flatMap((line, i) => (line.includes(needle) ? [i + 1] : []));
  assert.ok(hits.length >= n, `test bug: fewer than ${n} lines contain ${JSON.stringify(needle)}`);
  return hits[n - 1]!;
}

function parse(text: string, env: Record<string, string> = {}): Config {
  return parseConfig(text, FILE, { env });
}

function configError(text: string, env: Record<string, string> = {}): ConfigError {
  try {
    parse(text, env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    assert.fail(`expected a ConfigError, got ${String(err)}`);
  }
  assert.fail('expected a ConfigError, but the configuration loaded');
}

/** The lines of the ConfigError message for `text`. */
function errorLines(text: string, env: Record<string, string> = {}): string[] {
  return configError(text, env).message.split('\n');
}

function get<K, V>(map: ReadonlyMap<K, V>, key: K): V {
  const value = map.get(key);
  assert.ok(value !== undefined, `missing ${String(key)}`);
  return value;
}

// The smallest valid configuration: everything optional left out.
const MINIMAL = `listen:
  port: 8080
upstreams:
  backend:
    url: https://backend.example.com/base/
routes:
  r:
    method: GET
    path: /r
    upstream: backend
products:
  p:
    routes: [r]
`;

describe('parseConfig: valid configurations', () => {
  it('loads gateway.example.yaml with its defaults', () => {
    const config = loadConfigFile(EXAMPLE, { env: {} });
    const dir = path.dirname(EXAMPLE);
    assert.equal(config.file, EXAMPLE);
    assert.deepEqual(config.listen, {
      host: '0.0.0.0',
      port: 8080,
      trustedProxies: [],
      maxBodySize: 10 * 1024 * 1024,
      dropHeaders: [],
      publicHost: undefined,
      timeouts: { headersMs: 10_000, requestMs: 60_000, keepAliveMs: 65_000, lingering: { ms: 30_000, idleMs: 5_000, bytes: 64 * 1024 * 1024 } },
      tls: undefined,
      clientCertificateHeader: undefined,
    });
    assert.deepEqual(config.store, {
      driver: 'sqlite',
      path: path.join(dir, 'data', 'gateway.db'),
      secretKeyFile: path.join(dir, 'data', 'gateway.db.key'),
      tokenCacheSize: 100_000,
      busyTimeoutMs: 2000,
    });
    assert.deepEqual(config.log, { level: 'info', access: true });
    // The portal's try-it panel asks for tokens from the portal's origin.
    assert.deepEqual(config.oauth, {
      realm: 'token-gateway',
      policies: [{ cors: { origins: ['http://localhost:8081'] } }],
      issuer: 'http://localhost:8080',
      introspectionClients: [],
      signing: SIGNING_DEFAULTS,
      dpop: DPOP_DEFAULTS,
    });

    const demo = get(config.authServers, 'demo');
    assert.equal(demo.url.href, 'http://127.0.0.1:9100/authenticate');
    assert.equal(demo.allowInsecureHttp, true);
    assert.equal(demo.timeoutMs, 3000);
    assert.equal(demo.clientId, 'gateway');
    assert.equal(demo.clientSecret, 'demo-gateway-secret');
    assert.equal(demo.subjectField, 'sub');

    assert.deepEqual([...config.upstreams.keys()], ['hello-mock', 'echo', 'orders-backend']);
    assert.deepEqual(get(config.upstreams, 'hello-mock'), {
      kind: 'mock',
      name: 'hello-mock',
      audience: 'hello-mock',
      status: 200,
      headers: {},
      body: { message: 'Hello from the token gateway' },
    });
    assert.deepEqual(get(config.upstreams, 'echo'), { kind: 'echo', name: 'echo', audience: 'echo' });
    assert.deepEqual(get(config.upstreams, 'orders-backend'), {
      kind: 'http',
      name: 'orders-backend',
      audience: 'orders-backend',
      targets: [{ origin: 'http://127.0.0.1:9200', basePath: '' }],
      retries: 0,
      failureThreshold: 3,
      cooldownMs: 10_000,
      connectTimeoutMs: 2000,
      timeoutMs: 10_000,
      connections: 128,
      ca: undefined,
      servername: undefined,
    });

    // The document's operations first (examples/orders.openapi.yaml), then the routes written out.
    assert.deepEqual([...config.routes.keys()], ['listOrders', 'createOrder', 'getOrder', 'hello', 'quota', 'spike', 'private', 'search', 'echo']);
    assert.equal(get(config.openapi, 'orders').file, path.join(dir, 'examples', 'orders.openapi.yaml'));
    const orderRoutes = ['listOrders', 'createOrder', 'getOrder'].map((name) => get(config.routes, name));
    assert.deepEqual(
      orderRoutes.map((r) => [r.method, r.path, r.scopes, r.requireSubject, [...r.products], r.operation?.api]),
      [
        ['GET', '/v1/orders', ['orders:read'], true, ['orders'], 'orders'],
        ['POST', '/v1/orders', ['orders:write'], true, ['orders'], 'orders'],
        ['GET', '/v1/orders/{id}', ['orders:read'], true, ['orders'], 'orders'],
      ],
    );
    for (const r of orderRoutes) assert.deepEqual(r.policies, [{ cors: { origins: ['http://localhost:8081'], exposeHeaders: ['X-Request-Id', 'Location'] } }], r.name);
    assert.deepEqual([...get(config.routes, 'echo').products], ['hello']);

    const hello = get(config.products, 'hello');
    assert.deepEqual([...hello.grants], ['client_credentials']);
    assert.equal(hello.accessTokenLifetime, 3600);
    assert.equal(hello.refreshTokenLifetime, 86_400, 'refreshTokenLifetime defaults to one day');
    const orders = get(config.products, 'orders');
    assert.deepEqual(orders.routes, ['listOrders', 'createOrder', 'getOrder']);
    assert.deepEqual(orders.scopes, ['orders:read', 'orders:write'], "the document's scopes");
    assert.deepEqual([...orders.grants], ['authorization_code', 'password', 'refresh_token', 'client_credentials']);
    assert.deepEqual(orders.authorization?.login, { kind: 'authServer', name: 'demo' });
    assert.equal(orders.authServer, 'demo');
    assert.equal(orders.accessTokenLifetime, 3600);
    assert.equal(orders.refreshTokenLifetime, 86_400);
    assert.equal(hello.visible, true);
    assert.deepEqual(config.portal, {
      host: '127.0.0.1',
      port: 8081,
      tls: undefined,
      title: 'Token gateway developers',
      publicUrl: undefined,
      gatewayUrl: 'http://localhost:8080',
      signup: 'open',
      sessionLifetimeMs: 8 * 3_600_000,
      keyOverlapMs: 3_600_000,
      maxAppsPerDeveloper: 10,
    });
    assert.equal(orders.approval, 'manual', 'the default with the password grant');
    assert.equal(hello.approval, 'auto');
    assert.deepEqual(config.mail, { from: 'Token gateway developers <portal@localhost>', kind: 'log' });
  });

  it('substitutes the environment into gateway.example.yaml', () => {
    const config = loadConfigFile(EXAMPLE, {
      env: { GATEWAY_PORT: '9090', GATEWAY_HOST: '127.0.0.1', AUTHSERVER_URL: 'https://auth.example.com/check', GATEWAY_DB: '/var/lib/gw.db', PORTAL_PORT: '9191' },
    });
    assert.deepEqual(config.listen, {
      host: '127.0.0.1',
      port: 9090,
      trustedProxies: [],
      maxBodySize: 10 * 1024 * 1024,
      dropHeaders: [],
      publicHost: undefined,
      timeouts: { headersMs: 10_000, requestMs: 60_000, keepAliveMs: 65_000, lingering: { ms: 30_000, idleMs: 5_000, bytes: 64 * 1024 * 1024 } },
      tls: undefined,
      clientCertificateHeader: undefined,
    });
    assert.equal(config.store.driver, 'sqlite');
    assert.equal(config.store.path, '/var/lib/gw.db');
    assert.equal(config.store.secretKeyFile, '/var/lib/gw.db.key');
    assert.equal(get(config.authServers, 'demo').url.href, 'https://auth.example.com/check');
    // The portal's origin, allowed by CORS on the token endpoint and the orders operations, follows its port.
    assert.equal(config.portal?.port, 9191);
    assert.deepEqual(config.oauth.policies, [{ cors: { origins: ['http://localhost:9191'] } }]);
    assert.deepEqual(get(config.routes, 'createOrder').policies, [{ cors: { origins: ['http://localhost:9191'], exposeHeaders: ['X-Request-Id', 'Location'] } }]);
  });

  it('fills every default of a minimal configuration', () => {
    const config = parse(MINIMAL);
    assert.equal(config.file, FILE);
    assert.deepEqual(config.listen, {
      host: '0.0.0.0',
      port: 8080,
      trustedProxies: [],
      maxBodySize: 10 * 1024 * 1024,
      dropHeaders: [],
      publicHost: undefined,
      timeouts: { headersMs: 10_000, requestMs: 60_000, keepAliveMs: 65_000, lingering: { ms: 30_000, idleMs: 5_000, bytes: 64 * 1024 * 1024 } },
      tls: undefined,
      clientCertificateHeader: undefined,
    });
    assert.deepEqual(config.store, {
      driver: 'sqlite',
      path: '/srv/gateway/data/gateway.db',
      secretKeyFile: '/srv/gateway/data/gateway.db.key',
      tokenCacheSize: 100_000,
      busyTimeoutMs: 2000,
    });
    assert.deepEqual(config.log, { level: 'info', access: true });
    assert.equal(config.shutdownTimeoutMs, 30_000);
    assert.deepEqual(config.admin, { host: '127.0.0.1', port: 9901 });
    assert.deepEqual(config.oauth, { realm: 'gateway', policies: [], issuer: undefined, introspectionClients: [], signing: SIGNING_DEFAULTS, dpop: DPOP_DEFAULTS });
    assert.equal(config.authServers.size, 0);
    assert.deepEqual(get(config.upstreams, 'backend'), {
      kind: 'http',
      name: 'backend',
      audience: 'backend',
      targets: [{ origin: 'https://backend.example.com', basePath: '/base' }],
      retries: 0,
      failureThreshold: 3,
      cooldownMs: 10_000,
      connectTimeoutMs: 5000,
      timeoutMs: 30_000,
      connections: 128,
      ca: undefined,
      servername: undefined,
    });
    const route = get(config.routes, 'r');
    assert.deepEqual(
      { ...route, products: [...route.products] },
      {
        name: 'r',
        method: 'GET',
        path: '/r',
        upstream: 'backend',
        scopes: [],
        requireSubject: false,
        upstreamIdentity: undefined,
        rateLimitHeaders: true,
        products: ['p'],
        policies: [],
        operation: undefined,
      },
    );
    const product = get(config.products, 'p');
    assert.deepEqual(
      { ...product, grants: [...product.grants] },
      {
        name: 'p',
        displayName: 'p',
        description: '',
        routes: ['r'],
        scopes: [],
        grants: ['client_credentials'],
        authServer: undefined,
        accessTokenLifetime: 3600,
        accessTokenFormat: 'opaque',
        audience: 'p',
        senderConstraint: 'none',
        upstreamIdentity: 'headers',
        refreshTokenLifetime: 86_400,
        refreshReuseGraceMs: 0,
        quota: undefined,
        rateLimitHeaders: true,
        visible: false,
        approval: 'auto',
        authorization: undefined,
      },
    );
    assert.equal(config.portal, undefined, 'no portal unless declared');
  });

  it('loads gateway.redis.example.yaml: gateway.example.yaml on Redis, its ports from the environment', () => {
    const config = loadConfigFile(REDIS_EXAMPLE, { env: {} });
    const dir = path.dirname(REDIS_EXAMPLE);
    assert.deepEqual(config.store, {
      driver: 'redis',
      connection: { kind: 'server', url: 'redis://127.0.0.1:6379' },
      keyPrefix: 'gateway:',
      timeoutMs: 1000,
      secretKeyFile: path.join(dir, 'data', 'gateway.key'),
      tokenCacheSize: 100_000,
    });
    assert.deepEqual([config.listen.port, config.admin, config.portal?.port], [8080, { host: '127.0.0.1', port: 9901 }, 8081]);

    // Everything but the store, the admin listener and the two counting policies is the SQLite example's.
    const sqlite = loadConfigFile(EXAMPLE, { env: {} });
    for (const key of ['listen', 'log', 'workers', 'oauth', 'portal', 'mail', 'authServers', 'upstreams', 'products'] as const) {
      assert.deepEqual(config[key], sqlite[key], key);
    }
    assert.deepEqual([...config.routes.keys()], [...sqlite.routes.keys()]);
    for (const [name, route] of config.routes) {
      if (name === 'quota' || name === 'spike') continue;
      assert.deepEqual(route, sqlite.routes.get(name), name);
    }
    assert.deepEqual(get(config.routes, 'quota').policies, [{ quota: { limit: 5, interval: 'minute', window: 'calendar', failOpen: false } }]);
    assert.deepEqual(get(config.routes, 'spike').policies, [{ spikeArrest: { rate: '2ps', failOpen: true } }]);

    const second = loadConfigFile(REDIS_EXAMPLE, {
      env: { GATEWAY_PORT: '8082', ADMIN_PORT: '9902', PORTAL_PORT: '8083', REDIS_URL: 'rediss://gw:s3cret@redis.internal:6380/2', REDIS_PREFIX: 'staging:' },
    });
    assert.deepEqual([second.listen.port, second.admin, second.portal?.port], [8082, { host: '127.0.0.1', port: 9902 }, 8083]);
    assert.equal(second.oauth.issuer, 'http://localhost:8082');
    assert.equal(second.store.driver, 'redis');
    assert.deepEqual(second.store.connection, { kind: 'server', url: 'rediss://gw:s3cret@redis.internal:6380/2' });
    assert.equal(second.store.keyPrefix, 'staging:');
  });

  it('reads a Redis store: one server, a Cluster or a Sentinel set', () => {
    const server = parse(`${MINIMAL}store:\n  driver: redis\n  url: redis://10.0.0.5:6379/3\n`);
    assert.deepEqual(server.store, {
      driver: 'redis',
      connection: { kind: 'server', url: 'redis://10.0.0.5:6379/3' },
      keyPrefix: 'gateway:',
      timeoutMs: 1000,
      secretKeyFile: '/srv/gateway/data/gateway.key',
      tokenCacheSize: 100_000,
    });

    const cluster = parse(
      `${MINIMAL}store:\n  driver: redis\n  cluster: [rediss://gw:pw@10.0.0.1:6379, redis://10.0.0.2:6379]\n  keyPrefix: "edge:"\n  timeout: 250ms\n  secretKeyFile: keys/gw.key\n  tokenCacheSize: 0\n`,
    );
    assert.deepEqual(cluster.store, {
      driver: 'redis',
      connection: { kind: 'cluster', urls: ['rediss://gw:pw@10.0.0.1:6379', 'redis://10.0.0.2:6379'] },
      keyPrefix: 'edge:',
      timeoutMs: 250,
      secretKeyFile: '/srv/gateway/keys/gw.key',
      tokenCacheSize: 0,
    });

    const sentinel = parse(
      `${MINIMAL}store:\n  driver: redis\n  sentinel:\n    name: mymaster\n    nodes: ["10.0.0.1:26379", "[fd00::2]:26379", sentinel-3.internal:26379]\n    username: gw\n    password: \${REDIS_PASSWORD}\n    db: 1\n  timeout: 2\n`,
      { REDIS_PASSWORD: 'from-the-env' },
    );
    assert.deepEqual(sentinel.store, {
      driver: 'redis',
      connection: {
        kind: 'sentinel',
        name: 'mymaster',
        nodes: ['10.0.0.1:26379', '[fd00::2]:26379', 'sentinel-3.internal:26379'],
        login: { username: 'gw', password: 'from-the-env', db: 1 },
      },
      keyPrefix: 'gateway:',
      timeoutMs: 2000,
      secretKeyFile: '/srv/gateway/data/gateway.key',
      tokenCacheSize: 100_000,
    });
    const anonymous = parse(`${MINIMAL}store:\n  driver: redis\n  sentinel: { name: mymaster, nodes: ["10.0.0.1:26379"] }\n`);
    assert.deepEqual(anonymous.store.driver === 'redis' && anonymous.store.connection, { kind: 'sentinel', name: 'mymaster', nodes: ['10.0.0.1:26379'], login: {} });
  });

  it('resolves relative paths against the folder of the file', () => {
    const config = parseConfig(`${MINIMAL}store:\n  path: ../db/gw.sqlite\n  secretKeyFile: keys/secret\n  tokenCacheSize: 0\n`, '/srv/gateway/conf/gateway.yaml', { env: {} });
    assert.deepEqual(config.store, {
      driver: 'sqlite',
      path: '/srv/gateway/db/gw.sqlite',
      secretKeyFile: '/srv/gateway/conf/keys/secret',
      tokenCacheSize: 0,
      busyTimeoutMs: 2000,
    });
  });

  it('reads durations with units and integers as seconds', () => {
    const config = parse(
      configYaml({
        upstreams: '  timed:\n    url: https://timed.example.com\n    connectTimeout: 250ms\n    timeout: 2\n',
        products: [
          '  minutes:',
          '    routes: [hello]',
          '    accessTokenLifetime: 5m',
          '    refreshTokenLifetime: 2d',
          '  seconds:',
          '    routes: [hello]',
          '    accessTokenLifetime: 90s',
          '    refreshTokenLifetime: 0',
          '',
        ].join('\n'),
      }).replace('    timeout: 1s\n    clientId', '    timeout: 500ms\n    clientId'),
    );
    assert.equal(get(config.authServers, 'users').timeoutMs, 500);
    const timed = get(config.upstreams, 'timed');
    assert.equal(timed.kind, 'http');
    if (timed.kind === 'http') {
      assert.equal(timed.connectTimeoutMs, 250);
      assert.equal(timed.timeoutMs, 2000);
    }
    const backend = get(config.upstreams, 'backend');
    if (backend.kind === 'http') assert.equal(backend.timeoutMs, 1000);
    assert.equal(get(config.products, 'orders').accessTokenLifetime, 600, 'an integer is seconds');
    assert.equal(get(config.products, 'orders').refreshTokenLifetime, 3600, '1h');
    assert.equal(get(config.products, 'minutes').accessTokenLifetime, 300);
    assert.equal(get(config.products, 'minutes').refreshTokenLifetime, 172_800);
    assert.equal(get(config.products, 'seconds').accessTokenLifetime, 90);
    assert.equal(get(config.products, 'seconds').refreshTokenLifetime, 0);
    assert.equal(get(config.products, 'hello').accessTokenLifetime, 3600, 'default');
  });

  it('returns a frozen config and leaves its input alone', () => {
    const text = configYaml({ upstreams: '  headers:\n    mock:\n      headers: { x-a: b }\n      body: { list: [1, 2] }\n' });
    const env: Record<string, string> = { UNUSED: 'x' };
    const config = parseConfig(text, FILE, { env });
    assert.deepEqual(env, { UNUSED: 'x' });
    assert.equal(Object.isFrozen(env), false, 'the env object is not frozen along with the config');

    const product = get(config.products, 'orders');
    const route = get(config.routes, 'admin-only');
    const mock = get(config.upstreams, 'headers');
    assert.equal(mock.kind, 'mock');
    const frozen: [string, unknown][] = [
      ['config', config],
      ['listen', config.listen],
      ['store', config.store],
      ['log', config.log],
      ['oauth', config.oauth],
      ['product', product],
      ['product.routes', product.routes],
      ['product.scopes', product.scopes],
      ['route', route],
      ['route.scopes', route.scopes],
      ['authServer', get(config.authServers, 'users')],
      ['upstream', mock],
    ];
    if (mock.kind === 'mock') {
      frozen.push(['mock.headers', mock.headers], ['mock.body', mock.body], ['mock.body.list', (mock.body as { list: number[] }).list]);
    }
    for (const [what, value] of frozen) assert.ok(Object.isFrozen(value), `${what} is frozen`);
    assert.throws(() => {
      (config.listen as { port: number }).port = 1;
    }, TypeError);
    assert.throws(() => {
      (product.scopes as string[]).push('more');
    }, TypeError);

    // A second parse of the same text gives an equal, separate config.
    const again = parseConfig(text, FILE, { env });
    assert.notEqual(again, config);
    assert.deepEqual(again, config);
  });

  it('uses process.env when no env is given', () => {
    const name = `GATEWAY_TEST_PORT_${process.pid}`;
    process.env[name] = '7001';
    try {
      const config = parseConfig(MINIMAL.replace('port: 8080', `port: \${${name}}`), FILE);
      assert.equal(config.listen.port, 7001);
    } finally {
      delete process.env[name];
    }
  });
});

describe('parseConfig: environment substitution', () => {
  it('substitutes ${VAR} and ${VAR:-default} in values', () => {
    const text = configYaml()
      .replace('  path: ./gateway.db\n', '  path: ${DATA_DIR}/gw.db\n  tokenCacheSize: ${CACHE:-500}\n')
      .replace('host: 127.0.0.1', 'host: ${HOST}')
      .replace('realm: test-realm', 'realm: ${REALM:-fallback-realm}')
      .replace('level: info', 'level: ${LEVEL:-info}')
      .replace('url: http://127.0.0.1:9/authenticate', 'url: http://${AUTH_HOST}:${AUTH_PORT:-9100}/check');
    const config = parse(text, { HOST: '127.0.0.2', DATA_DIR: '/data', AUTH_HOST: 'auth.local', LEVEL: 'debug', REALM: '' });
    assert.equal(config.listen.host, '127.0.0.2');
    assert.equal(config.store.driver, 'sqlite');
    assert.equal(config.store.path, '/data/gw.db');
    assert.equal(config.store.tokenCacheSize, 500, 'a wholly substituted plain value is read as YAML: a number');
    assert.equal(config.log.level, 'debug', 'a set variable wins over the default');
    assert.equal(config.oauth.realm, 'fallback-realm', 'an empty variable takes the default');
    assert.equal(get(config.authServers, 'users').url.href, 'http://auth.local:9100/check');
  });

  it('reads $${ as a literal ${', () => {
    const text = configYaml({ products: '  priced:\n    routes: [hello]\n    description: costs $${AMOUNT} or "$${OTHER:-x}"\n    displayName: "$${NAME}"\n' });
    const config = parse(text, { AMOUNT: '5', NAME: 'n' });
    const priced = get(config.products, 'priced');
    assert.equal(priced.description, 'costs ${AMOUNT} or "${OTHER:-x}"');
    assert.equal(priced.displayName, '${NAME}');
  });

  it('turns a whole unquoted ${PORT:-8080} into the number 8080', () => {
    const text = MINIMAL.replace('port: 8080', 'port: ${PORT:-8080}');
    assert.equal(parse(text).listen.port, 8080);
    assert.equal(parse(text, { PORT: '9000' }).listen.port, 9000);
    const access = parse(`${MINIMAL}log:\n  access: \${ACCESS_LOG:-false}\n`).log.access;
    assert.equal(access, false, 'a boolean too');
  });

  it('keeps a quoted ${PORT:-8080} a string, which the schema then refuses for the port', () => {
    for (const quoted of ['"${PORT:-8080}"', "'${PORT:-8080}'"]) {
      const text = MINIMAL.replace('port: 8080', `port: ${quoted}`);
      const line = lineOf(text, 'port:');
      assert.deepEqual(errorLines(text), [`listen.port: must be an integer, found "8080" (gateway.yaml:${line})`]);
      assert.deepEqual(errorLines(text, { PORT: '9000' }), [`listen.port: must be an integer, found "9000" (gateway.yaml:${line})`]);
    }
    // A quoted value stays a string where a string belongs.
    const realm = parse(`${MINIMAL}oauth:\n  realm: "\${REALM:-123}"\n`).oauth.realm;
    assert.equal(realm, '123');
  });

  it('refuses an unset variable without a default, naming the path and the line', () => {
    const text = configYaml({ products: '  envy:\n    routes: [hello]\n    scopes: [hello:read, "${EXTRA_SCOPE}"]\n' }).replace('host: 127.0.0.1', 'host: ${LISTEN_HOST}');
    const err = configError(text);
    assert.deepEqual(err.message.split('\n'), [
      `listen.host: environment variable LISTEN_HOST is not set and has no default (gateway.yaml:${lineOf(text, 'LISTEN_HOST')})`,
      `products.envy.scopes[1]: environment variable EXTRA_SCOPE is not set and has no default (gateway.yaml:${lineOf(text, 'EXTRA_SCOPE')})`,
    ]);
    assert.deepEqual(err.issues[0], { path: 'listen.host', message: 'environment variable LISTEN_HOST is not set and has no default', line: lineOf(text, 'LISTEN_HOST') });
    // Set, it loads.
    assert.equal(parse(text, { LISTEN_HOST: '::1', EXTRA_SCOPE: 'hello:admin' }).listen.host, '::1');
  });

  it('ignores ${...} in comments', () => {
    const text = `# \${NOT_SET_ANYWHERE}\n${MINIMAL.replace('port: 8080', 'port: 8080 # ${ALSO_NOT_SET} and ${X:-1}')}`;
    const config = parse(text);
    assert.equal(config.listen.port, 8080);
  });
});

describe('parseConfig: errors name the YAML path and the line', () => {
  it('unknown key', () => {
    const text = configYaml().replace('  host: 127.0.0.1\n', '  host: 127.0.0.1\n  hots: 127.0.0.1\n');
    assert.deepEqual(errorLines(text), [`listen.hots: unknown key; did you mean "host"? (gateway.yaml:${lineOf(text, 'hots:')})`]);
  });

  it('portal: an unknown sign-up mode, a bad duration', () => {
    const text = configYaml({ extra: 'portal:\n  listen: { port: 0 }\n  signup: closed\n  keyOverlap: soon\n' });
    assert.deepEqual(errorLines(text), [
      `portal.signup: must be one of open, invited, found "closed" (gateway.yaml:${lineOf(text, 'signup:')})`,
      `portal.keyOverlap: must be a duration such as 30s or 5m, found "soon" (gateway.yaml:${lineOf(text, 'keyOverlap:')})`,
    ]);
  });

  it("approval, maxAppsPerDeveloper, requireSubject and a quota's per: only their values", () => {
    const text = configYaml({
      extra: 'portal:\n  listen: { port: 0 }\n  maxAppsPerDeveloper: 0\n',
      routes: '  mine:\n    method: GET\n    path: /v1/mine\n    upstream: mock\n    requireSubject: yes-please\n',
      products: '  shop:\n    routes: [mine]\n    approval: sometimes\n    quota: { limit: 5, interval: day, per: team }\n',
    });
    assert.deepEqual(errorLines(text), [
      `routes.mine.requireSubject: must be true or false, found "yes-please" (gateway.yaml:${lineOf(text, 'requireSubject:')})`,
      `products.shop.approval: must be one of auto, manual, found "sometimes" (gateway.yaml:${lineOf(text, 'approval:')})`,
      `products.shop.quota.per: must be one of app, developer, found "team" (gateway.yaml:${lineOf(text, 'quota:')})`,
      `portal.maxAppsPerDeveloper: must be >= 1, found 0 (gateway.yaml:${lineOf(text, 'maxAppsPerDeveloper:')})`,
    ]);
  });

  it('portal: open sign-up without a mail transport is refused, with the path and line; invitations need none', () => {
    const text = configYaml({ extra: 'portal:\n  listen: { port: 0 }\n  signup: open\n' });
    assert.deepEqual(errorLines(text), [
      `portal.signup: open sign-up mails a link to confirm the address: add a "mail" section (smtp, or log: true for development), or use signup: invited (gateway.yaml:${lineOf(text, 'signup:')})`,
    ]);
    assert.equal(parse(configYaml({ extra: 'portal:\n  listen: { port: 0 }\n  signup: invited\n' })).portal?.signup, 'invited');
    assert.equal(parse(configYaml({ extra: 'portal:\n  listen: { port: 0 }\n' })).portal?.signup, 'invited', 'the default without mail');
    const mailed = parse(
      configYaml({
        extra:
          'portal:\n  listen: { port: 0 }\n  publicUrl: https://Dev.Example.com\nmail:\n  from: p@example.com\n  smtp: { host: smtp.example.com, port: 587, auth: { user: u, pass: "${SMTP_PASSWORD}" }, ca: ca.pem }\n',
      }),
      { SMTP_PASSWORD: 'pw' },
    );
    assert.equal(mailed.portal?.signup, 'open', 'the default with mail');
    assert.equal(mailed.portal?.publicUrl, 'https://dev.example.com');
    assert.deepEqual(mailed.mail, {
      from: 'p@example.com',
      kind: 'smtp',
      host: 'smtp.example.com',
      port: 587,
      secure: false,
      allowPlaintext: false,
      auth: { user: 'u', pass: 'pw' },
      ca: '/srv/gateway/ca.pem',
    });
  });

  it("portal: publicUrl and gatewayUrl name a host, no wildcard or ';' (gatewayUrl's origin is the pages' CSP connect-src)", () => {
    // A CSP source cannot name an IPv6 address; a port past 65535 is no port (it made new URL throw at start).
    for (const url of ['http://*', 'https://*.example.com', 'http://api.example.com;script-src', 'http://user@api.example.com', 'http://[::1]:8080', 'http://localhost:99999']) {
      const text = configYaml({ extra: `portal:\n  listen: { port: 0 }\n  gatewayUrl: '${url}'\n` });
      assert.match(
        errorLines(text).join('\n'),
        new RegExp(`^portal\\.gatewayUrl: must be an origin such as https://api\\.example\\.com, found .* \\(gateway\\.yaml:${lineOf(text, 'gatewayUrl:')}\\)$`),
        url,
      );
    }
    for (const url of ['https://api.example.com', 'http://localhost:8080', 'http://127.0.0.1:9', 'http://localhost:65535']) {
      assert.equal(parse(configYaml({ extra: `portal:\n  listen: { port: 0 }\n  gatewayUrl: '${url}'\n  publicUrl: '${url}'\n` })).portal?.gatewayUrl, url);
    }
    assert.equal(parse(configYaml({ extra: "portal:\n  listen: { port: 0 }\n  publicUrl: 'http://[::1]:8080'\n" })).portal?.publicUrl, 'http://[::1]:8080');
    const far = configYaml({ extra: "portal:\n  listen: { port: 0 }\n  publicUrl: 'http://localhost:70000'\n" });
    assert.match(errorLines(far).join('\n'), /^portal\.publicUrl: must be an origin such as https:\/\/developers\.example\.com, found "http:\/\/localhost:70000" /);
  });

  it('mail: one transport, smtp or log', () => {
    const text = configYaml({ extra: 'mail:\n  from: p@example.com\n  log: false\n' });
    assert.deepEqual(errorLines(text), [`mail.log: must be true, found false (gateway.yaml:${lineOf(text, 'log: false')})`]);
  });

  it('an alias without its anchor (found by fuzzing) is a ConfigError, not a crash', () => {
    const text = configYaml().replace('  realm: test-realm\n', '  realm: *nowhere\n');
    assert.deepEqual(errorLines(text), ['Unresolved alias (the anchor must be set before the alias): nowhere']);
  });

  it('unknown key holding a block mapping: the line of the key', () => {
    const text = configYaml({ extra: 'bogus:\n  nested: 1\n' });
    assert.deepEqual(errorLines(text), [`bogus: unknown key (gateway.yaml:${lineOf(text, 'bogus:')})`]);
    const nested = configYaml().replace('  realm: test-realm\n', '  realm: test-realm\n  extras:\n    a: 1\n');
    assert.deepEqual(errorLines(nested), [`oauth.extras: unknown key (gateway.yaml:${lineOf(nested, 'extras:')})`]);
  });

  it('a name outside the name pattern in a map of names', () => {
    const text = configYaml({ upstreams: '  -dashed:\n    echo: true\n' });
    assert.deepEqual(errorLines(text), [
      `upstreams.-dashed: "-dashed" is not a valid name: letters, digits, _ . and -, starting with a letter or digit, at most 64, such as orders or hello-v2 (gateway.yaml:${lineOf(text, '-dashed:')})`,
    ]);
  });

  it('missing required key', () => {
    const text = configYaml({ routes: '  noupstream:\n    method: GET\n    path: /v1/no-upstream\n' });
    assert.deepEqual(errorLines(text), [`routes.noupstream: missing required key "upstream" (gateway.yaml:${lineOf(text, 'noupstream:')})`]);
  });

  it('bad pattern', () => {
    const text = configYaml({ routes: '  slashless:\n    method: GET\n    path: v1/slashless\n    upstream: mock\n' });
    assert.deepEqual(errorLines(text), [`routes.slashless.path: must be a path such as /v1/orders or /v1/orders/{id}, found "v1/slashless" (gateway.yaml:${lineOf(text, 'v1/slashless')})`]);
  });

  it('bad pattern inside a union (upstream url): only the closest branch is reported', () => {
    const text = configYaml({ upstreams: '  ftp:\n    url: ftp://files.example.com\n' });
    assert.deepEqual(errorLines(text), [
      `upstreams.ftp.url: must be a target URL such as http://127.0.0.1:3000 or https://orders.internal/v1, found "ftp://files.example.com" (gateway.yaml:${lineOf(text, 'ftp://')})`,
    ]);
  });

  it('bad value in a mock upstream: only the mock branch is reported', () => {
    const text = configYaml({ upstreams: '  teapot:\n    mock:\n      status: 100\n' });
    assert.deepEqual(errorLines(text), [`upstreams.teapot.mock.status: must be >= 200, found 100 (gateway.yaml:${lineOf(text, 'status: 100')})`]);
  });

  it('bad duration in an http upstream: reported on the duration alone', () => {
    const text = configYaml({ upstreams: '  slow:\n    url: https://slow.example.com\n    timeout: 5 minutes\n' });
    const lines = errorLines(text);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /^upstreams\.slow\.timeout: /);
    assert.ok(lines[0]!.endsWith(`(gateway.yaml:${lineOf(text, '5 minutes')})`), lines[0]);
  });

  it('duration too large', () => {
    const text = configYaml({ products: '  forever:\n    routes: [hello]\n    accessTokenLifetime: 999999999999999999d\n' });
    assert.deepEqual(errorLines(text), [`products.forever.accessTokenLifetime: is not a valid duration (gateway.yaml:${lineOf(text, '999999999999999999d')})`]);
  });

  it('wrong type', () => {
    const port = configYaml().replace('port: 0', 'port: eighty');
    assert.deepEqual(errorLines(port), [`listen.port: must be an integer, found "eighty" (gateway.yaml:${lineOf(port, 'eighty')})`]);
    const routes = configYaml({ products: '  single:\n    routes: hello\n' });
    assert.deepEqual(errorLines(routes), [`products.single.routes: must be a list, found "hello" (gateway.yaml:${lineOf(routes, 'routes: hello')})`]);
    const access = configYaml().replace('level: info', 'level: info\n  access: yes please');
    assert.deepEqual(errorLines(access), [`log.access: must be true or false, found "yes please" (gateway.yaml:${lineOf(access, 'yes please')})`]);
  });

  it('a name that is not a valid name is refused, not skipped', () => {
    // Upstream, route and product names must match the Name pattern; a key that does not must be
    // reported (not silently left unvalidated).
    const text = configYaml({ upstreams: '  -dashed:\n    whatever: 1\n' });
    const err = configError(text);
    const line = lineOf(text, '-dashed:');
    assert.ok(
      err.message.split('\n').some((l) => l.includes('-dashed') && l.endsWith(`(gateway.yaml:${line})`)),
      err.message,
    );
    const route = configYaml({ routes: '  bad name:\n    method: FETCH\n' });
    const routeErr = configError(route);
    assert.ok(
      routeErr.message.split('\n').some((l) => l.includes('bad name') && l.endsWith(`(gateway.yaml:${lineOf(route, 'bad name:')})`)),
      routeErr.message,
    );
  });

  it('unknown upstream of a route', () => {
    const text = configYaml({ routes: '  hello2:\n    method: GET\n    path: /v1/hello2\n    upstream: x\n' });
    assert.deepEqual(errorLines(text), [`routes.hello2.upstream: unknown upstream "x" (gateway.yaml:${lineOf(text, 'upstream: x')})`]);
  });

  it('unknown route in a product', () => {
    const text = configYaml({ products: '  broken:\n    routes: [hello, nope]\n' });
    const err = configError(text);
    assert.deepEqual(err.message.split('\n'), [`products.broken.routes[1]: unknown route "nope" (gateway.yaml:${lineOf(text, 'nope')})`]);
    assert.deepEqual(err.issues, [{ path: 'products.broken.routes[1]', message: 'unknown route "nope"', line: lineOf(text, 'nope') }]);
    const block = configYaml({ products: '  broken:\n    routes:\n      - hello\n      - missing-route\n' });
    assert.deepEqual(errorLines(block), [`products.broken.routes[1]: unknown route "missing-route" (gateway.yaml:${lineOf(block, '- missing-route')})`]);
  });

  it('password grant without authServer', () => {
    const text = configYaml({ products: '  pw:\n    routes: [hello]\n    grants: [password]\n' });
    assert.deepEqual(errorLines(text), [`products.pw.grants: the password grant needs "authServer" (gateway.yaml:${lineOf(text, 'grants: [password]')})`]);
  });

  it('refresh_token without password, and an unknown authorization server', () => {
    const text = configYaml({ products: '  rt:\n    routes: [hello]\n    grants: [client_credentials, refresh_token]\n    authServer: elsewhere\n' });
    assert.deepEqual(errorLines(text), [
      `products.rt.grants: refresh_token needs a grant that issues refresh tokens (password or authorization_code) (gateway.yaml:${lineOf(text, 'grants: [client_credentials, refresh_token]')})`,
      `products.rt.authServer: unknown authorization server "elsewhere" (gateway.yaml:${lineOf(text, 'authServer: elsewhere')})`,
    ]);
  });

  it('plain-http authServer without allowInsecureHttp', () => {
    for (const replacement of ['', '    allowInsecureHttp: false\n']) {
      const text = configYaml().replace('    allowInsecureHttp: true\n', replacement);
      assert.deepEqual(errorLines(text), [
        `authServers.users.url: must use https (set allowInsecureHttp: true to allow plain http) (gateway.yaml:${lineOf(text, 'url: http://127.0.0.1:9/authenticate')})`,
      ]);
    }
    const https = configYaml({ authServerUrl: 'https://auth.example.com/check' }).replace('    allowInsecureHttp: true\n', '');
    assert.equal(get(parse(https).authServers, 'users').allowInsecureHttp, false);
  });

  it('YAML syntax error, with its line', () => {
    const duplicate = 'listen:\n  port: 1\n  port: 2\n';
    const dupErr = configError(duplicate);
    assert.equal(dupErr.issues.length, 1);
    assert.equal(dupErr.issues[0]!.path, '');
    assert.equal(dupErr.issues[0]!.line, 3);
    assert.match(dupErr.message, /^Map keys must be unique \(gateway\.yaml:3\)$/);

    const tab = 'listen:\n\tport: 1\n';
    const tabErr = configError(tab);
    assert.equal(tabErr.issues[0]!.line, 2);
    assert.match(tabErr.message.split('\n')[0]!, /\(gateway\.yaml:2\)$/);
  });

  it('duplicate method and path, also with differently named parameters', () => {
    const text = configYaml({
      routes: [
        '  hello-again:',
        '    method: GET',
        '    path: /v1/hello',
        '    upstream: mock',
        '  backend-by-name:',
        '    method: GET',
        '    path: /v1/backend/{name}',
        '    upstream: backend',
        '  hello-post:',
        '    method: POST',
        '    path: /v1/hello',
        '    upstream: mock',
        '',
      ].join('\n'),
    });
    assert.deepEqual(errorLines(text), [
      `routes.hello-again.path: same method and path as route "hello" (gateway.yaml:${nthLine(text, 'path: /v1/hello', 2)})`,
      `routes.backend-by-name.path: same method and path as route "backend" (gateway.yaml:${lineOf(text, '{name}')})`,
    ]);
  });

  it('scope on a route that its product does not declare', () => {
    const text = configYaml({
      routes: '  secret:\n    method: GET\n    path: /v1/secret\n    upstream: mock\n    scopes: [secret:read]\n',
      products: '  open:\n    routes: [secret]\n    scopes: [other]\n',
    });
    assert.deepEqual(errorLines(text), [`routes.secret.scopes: scope "secret:read" is not declared by product "open" (gateway.yaml:${lineOf(text, '[secret:read]')})`]);
  });

  it('reports every problem at once', () => {
    const text = configYaml({
      routes: '  r1:\n    method: GET\n    path: /v1/r1\n    upstream: nowhere\n',
      products: '  p1:\n    routes: [r1, ghost]\n',
    });
    assert.deepEqual(errorLines(text), [
      `routes.r1.upstream: unknown upstream "nowhere" (gateway.yaml:${lineOf(text, 'nowhere')})`,
      `products.p1.routes[1]: unknown route "ghost" (gateway.yaml:${lineOf(text, 'ghost')})`,
    ]);
  });

  it('store: the keys of one driver are refused with the other', () => {
    const sqlite = `${MINIMAL}store:\n  path: ./gw.db\n  url: redis://127.0.0.1:6379\n  cluster: [redis://127.0.0.1:7000]\n  sentinel: { name: m, nodes: ["127.0.0.1:26379"] }\n  keyPrefix: "gw:"\n  timeout: 1s\n`;
    assert.deepEqual(errorLines(sqlite), [
      `store.url: only with driver: redis (gateway.yaml:${lineOf(sqlite, 'url: redis')})`,
      `store.cluster: only with driver: redis (gateway.yaml:${lineOf(sqlite, 'cluster:')})`,
      `store.sentinel: only with driver: redis (gateway.yaml:${lineOf(sqlite, 'sentinel:')})`,
      `store.keyPrefix: only with driver: redis (gateway.yaml:${lineOf(sqlite, 'keyPrefix:')})`,
      `store.timeout: only with driver: redis (gateway.yaml:${lineOf(sqlite, 'timeout:')})`,
    ]);
    const redis = `${MINIMAL}store:\n  driver: redis\n  url: redis://127.0.0.1:6379\n  path: ./gw.db\n  busyTimeout: 5s\n`;
    assert.deepEqual(errorLines(redis), [
      `store.path: only with driver: sqlite (gateway.yaml:${lineOf(redis, 'path: ./gw.db')})`,
      `store.busyTimeout: only with driver: sqlite (gateway.yaml:${lineOf(redis, 'busyTimeout:')})`,
    ]);
    const unknown = `${MINIMAL}store:\n  driver: memcached\n`;
    assert.deepEqual(errorLines(unknown), [`store.driver: must be one of sqlite, redis, found "memcached" (gateway.yaml:${lineOf(unknown, 'memcached')})`]);
  });

  it('store: redis needs exactly one of url, cluster and sentinel', () => {
    const none = `${MINIMAL}store:\n  driver: redis\n  keyPrefix: "gw:"\n`;
    assert.deepEqual(errorLines(none), [`store.driver: redis needs one of url, cluster or sentinel (gateway.yaml:${lineOf(none, 'driver: redis')})`]);
    const three = `${MINIMAL}store:\n  driver: redis\n  url: redis://127.0.0.1:6379\n  cluster: [redis://127.0.0.1:7000]\n  sentinel: { name: m, nodes: ["127.0.0.1:26379"] }\n`;
    assert.deepEqual(errorLines(three), [
      `store.cluster: only one of url, cluster or sentinel (url is set) (gateway.yaml:${lineOf(three, 'cluster:')})`,
      `store.sentinel: only one of url, cluster or sentinel (url is set) (gateway.yaml:${lineOf(three, 'sentinel:')})`,
    ]);
    const empty = `${MINIMAL}store:\n  driver: redis\n  cluster: []\n`;
    assert.deepEqual(errorLines(empty), [`store.cluster: must NOT have fewer than 1 items (gateway.yaml:${lineOf(empty, 'cluster:')})`]);
  });

  it('store: a URL the Redis driver cannot read, at its path, without its login', () => {
    const text = [
      `${MINIMAL}store:`,
      '  driver: redis',
      '  cluster:',
      '    - http://10.0.0.1:6379',
      '    - redis://10.0.0.2:6379/?tls=yes',
      '    - redis://10.0.0.3:6379/cache',
      '    - redis://gw:${REDIS_PASSWORD}@10.0.0.4:99999',
      '    - redis://10.0.0.5:6379/1',
      '',
    ].join('\n');
    const err = configError(text, { REDIS_PASSWORD: 'hunter/2' });
    assert.deepEqual(err.message.split('\n'), [
      `store.cluster[0]: the URL must start with redis:// or rediss:// (gateway.yaml:${lineOf(text, 'http://')})`,
      `store.cluster[1]: the URL may not carry a query or a fragment (gateway.yaml:${lineOf(text, '?tls')})`,
      `store.cluster[2]: the URL path must be a database number, such as /0 (gateway.yaml:${lineOf(text, '/cache')})`,
      `store.cluster[3]: not a URL (gateway.yaml:${lineOf(text, '99999')})`,
      `store.cluster[4]: a Cluster has only database 0: drop the path from the URL (gateway.yaml:${lineOf(text, '10.0.0.5')})`,
    ]);
    assert.doesNotMatch(err.message, /hunter/);
    const url = `${MINIMAL}store:\n  driver: redis\n  url: redis://:\${REDIS_PASSWORD}@redis.internal:6379\n`;
    const urlErr = configError(url, { REDIS_PASSWORD: 'hunter/2' });
    assert.deepEqual(urlErr.message.split('\n'), [`store.url: not a URL (gateway.yaml:${lineOf(url, 'redis.internal')})`]);
    assert.equal(parse(url, { REDIS_PASSWORD: encodeURIComponent('hunter/2') }).store.driver, 'redis', 'encoded, it is read');
  });

  it('store: Sentinel nodes are host:port, the timeout is longer than 0, the prefix has no braces', () => {
    const text = `${MINIMAL}store:\n  driver: redis\n  sentinel:\n    name: mymaster\n    nodes: ["10.0.0.1", "10.0.0.2:0", "10.0.0.3:70000"]\n  timeout: 0\n`;
    assert.deepEqual(errorLines(text), [`store.sentinel.nodes[0]: must be a host:port such as sentinel-1:26379 or [::1]:26379, found "10.0.0.1" (gateway.yaml:${lineOf(text, 'nodes:')})`]);
    const ports = text.replace('"10.0.0.1", ', '');
    assert.deepEqual(errorLines(ports), [
      `store.sentinel.nodes[0]: the port must be 1 to 65535 (gateway.yaml:${lineOf(ports, 'nodes:')})`,
      `store.sentinel.nodes[1]: the port must be 1 to 65535 (gateway.yaml:${lineOf(ports, 'nodes:')})`,
      `store.timeout: must be longer than 0 (gateway.yaml:${lineOf(ports, 'timeout:')})`,
    ]);
    const braces = `${MINIMAL}store:\n  driver: redis\n  url: redis://127.0.0.1:6379\n  keyPrefix: "{gw}:"\n`;
    assert.deepEqual(errorLines(braces), [`store.keyPrefix: must be a prefix without braces such as gateway: or staging:, found "{gw}:" (gateway.yaml:${lineOf(braces, 'keyPrefix:')})`]);
  });

  it('is a ConfigError with the issues', () => {
    const text = configYaml().replace('port: 0', 'port: 70000');
    const err = configError(text);
    assert.equal(err.name, 'ConfigError');
    assert.ok(err instanceof Error);
    assert.deepEqual(err.issues, [{ path: 'listen.port', message: 'must be <= 65535, found 70000', line: lineOf(text, '70000') }]);
  });
});

describe('loadConfigFile', () => {
  const temp = tempDir();
  after(() => temp.remove());

  it('reads a file and resolves paths against its folder', () => {
    const file = path.join(temp.dir, 'gateway.yaml');
    writeFileSync(file, configYaml());
    const config = loadConfigFile(file, { env: {} });
    assert.equal(config.file, file);
    assert.equal(config.store.driver, 'sqlite');
    assert.equal(config.store.path, path.join(temp.dir, 'gateway.db'));
    assert.equal(config.store.secretKeyFile, path.join(temp.dir, 'gateway.db.key'));
  });

  it('names the file (its base name) in errors', () => {
    const file = path.join(temp.dir, 'edge-7.yaml');
    const text = configYaml().replace('port: 0', 'port: -1');
    writeFileSync(file, text);
    assert.throws(
      () => loadConfigFile(file, { env: {} }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.message, `listen.port: must be >= 0, found -1 (edge-7.yaml:${lineOf(text, 'port: -1')})`);
        return true;
      },
    );
  });

  it('a missing file is a ConfigError without a line', () => {
    const file = path.join(temp.dir, 'absent.yaml');
    assert.throws(
      () => loadConfigFile(file, { env: {} }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.message, `cannot read ${file}: no such file`);
        assert.deepEqual(err.issues, [{ path: '', message: `cannot read ${file}: no such file`, line: undefined }]);
        return true;
      },
    );
  });
});
