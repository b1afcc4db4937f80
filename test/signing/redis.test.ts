// Signed tokens across instances on one Redis, as sidecars would run them: two gateway processes
// started at once make one first key between them, a JWT issued by one works at the other, and a
// revoked JWT or signing key is refused by both within a second.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { createApp, createDeveloper } from '../../src/admin/operations.ts';
import { revokeSigningKeyByKid } from '../../src/admin/signing-keys.ts';
import { loadConfigFile, type Config } from '../../src/config/load.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/port/index.ts';
import { basic, bearer, call, configYaml, storeAdminDeps, tempDir, tokenRequest, within } from '../helpers.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';
import { serve, type Served } from '../e2e/children.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';

describe('signed tokens on Redis, two instances', { skip }, () => {
  const dir = tempDir();
  let redis: RedisServer;
  let instances: Served[];
  let store: Store;
  let config: Config;
  let app: { key: string; secret: string };

  before(async () => {
    redis = await startRedis();
    const file = path.join(dir.dir, 'gateway.yaml');
    const yaml = configYaml({
      oauth: '  issuer: https://api.example.com',
      products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt\n    accessTokenLifetime: 10m',
    }).replace('store:\n  path: ./gateway.db', `store:\n  driver: redis\n  url: ${redis.url}\n  keyPrefix: "jwt:"`);
    writeFileSync(file, yaml);
    // The key file first, so that both instances, started at once, hash and encrypt with the same key.
    config = loadConfigFile(file, { env: {} });
    store = await openStore(config.store);
    const admin = storeAdminDeps(config, store);
    await createDeveloper(admin, { email: 'dev@example.com', name: 'Dev' });
    const created = await createApp(admin, { developer: 'dev@example.com', name: 'a', product: 'signed' });
    app = { key: created.key, secret: created.secret };
    instances = await Promise.all([serve(file), serve(file)]);
  });
  after(async () => {
    await Promise.all((instances ?? []).map((i) => i.stop()));
    await store?.close();
    await redis?.stop();
    dir.remove();
  });

  const issueAt = async (i: number) => {
    const res = await tokenRequest(instances[i]!.url, { grant_type: 'client_credentials' }, app);
    assert.equal(res.status, 200, res.text);
    return res.body.access_token as string;
  };
  const statusAt = async (i: number, token: string) => (await call(`${instances[i]!.url}/v1/hello`, { headers: bearer(token) })).status;
  const kidsAt = async (i: number) => ((await (await fetch(`${instances[i]!.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet).keys.map((k) => k.kid);

  test('two instances started at once make one first key between them; a JWT of one works at the other', async () => {
    const keys = await store.signingKeys.listSigningKeys();
    assert.equal(keys.length, 1);
    assert.deepEqual(await kidsAt(0), [keys[0]!.kid]);
    assert.deepEqual(await kidsAt(1), [keys[0]!.kid]);
    const token = await issueAt(0);
    assert.equal(await statusAt(1, token), 200);
    assert.equal(await statusAt(0, await issueAt(1)), 200);
  });

  test('a JWT revoked at one instance (RFC 7009) is refused at the other within a second', async () => {
    const token = await issueAt(0);
    assert.equal(await statusAt(1, token), 200);
    const revoked = await call(`${instances[0]!.url}/oauth2/revoke`, {
      method: 'POST',
      headers: { authorization: basic(app.key, app.secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    assert.equal(revoked.status, 200);
    assert.equal(
      await within(
        1000,
        () => statusAt(1, token),
        (s) => s === 401,
      ),
      401,
    );
  });

  test('a signing key revoked by an operator leaves both JWKS, and its tokens are refused at both within a second; a new key signs', async () => {
    const token = await issueAt(1);
    const kid = decodeProtectedHeader(token).kid!;
    assert.equal(await statusAt(0, token), 200);
    const { replacement } = await revokeSigningKeyByKid({ ...storeAdminDeps(config, store), signing: config.oauth.signing }, config.oauth.signing, kid);
    for (const i of [0, 1]) {
      assert.equal(
        await within(
          1000,
          () => statusAt(i, token),
          (s) => s === 401,
        ),
        401,
        `instance ${i}`,
      );
      assert.deepEqual(
        await within(
          1000,
          () => kidsAt(i),
          (kids) => kids.length === 1 && kids[0] === replacement,
        ),
        [replacement],
        `instance ${i}`,
      );
    }
    const fresh = await within(
      1000,
      () => issueAt(0),
      (t) => decodeProtectedHeader(t).kid === replacement,
    );
    assert.equal(decodeProtectedHeader(fresh).kid, replacement);
    assert.equal(await statusAt(1, fresh), 200);
  });
});
