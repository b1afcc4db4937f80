// Two gateways on one Redis, each with its management listener: what one's API registers, the
// other serves at once; a retried create reaching the other instance answers as the first; a
// revocation through one stops the token at the other.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createManagementClient } from '../../src/admin/management-clients.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type Gateway } from '../../src/host/index.ts';
import { createLogger } from '../../src/log.ts';
import { adminDeps, basic, bearer, call, configYaml, tempDir, tokenRequest } from '../helpers.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';
import { ALL_SCOPES, api } from './client.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';

describe('the management API of two gateways on one Redis', { skip }, () => {
  const dir = tempDir();
  let redis: RedisServer;
  let gateways: Gateway[];
  let requests: ReturnType<typeof api>[];

  before(async () => {
    redis = await startRedis();
    const file = path.join(dir.dir, 'gateway.yaml');
    const yaml = configYaml({ extra: 'management:\n  port: 0\n' }).replace(
      'store:\n  path: ./gateway.db',
      `store:\n  driver: redis\n  url: ${redis.url}\n  keyPrefix: "m:"\n  secretKeyFile: ./gateway.key`,
    );
    writeFileSync(file, yaml);
    const config = loadConfigFile(file, { env: {} });
    gateways = [await startGateway({ config, logger: createLogger('silent') })];
    gateways.push(await startGateway({ config, logger: createLogger('silent') }));
    const client = await createManagementClient(adminDeps(gateways[0]!, config), { name: 'automation', scopes: ALL_SCOPES });
    requests = await Promise.all(
      gateways.map(async (gw) => {
        const answer = await call(`${gw.managementUrl}/oauth2/token`, {
          method: 'POST',
          headers: { authorization: basic(client.key, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials',
        });
        assert.equal(answer.status, 200, answer.text);
        return api(gw.managementUrl!, answer.body.access_token);
      }),
    );
  });
  after(async () => {
    await Promise.all((gateways ?? []).map((g) => g.close()));
    await redis?.close();
    dir.remove();
  });

  test('an app registered through one gateway gets tokens at the other; a retry at the other replays; a revocation at the other stops it', async () => {
    const [first, second] = requests as [ReturnType<typeof api>, ReturnType<typeof api>];
    assert.equal((await first('POST', '/v1/developers', '/v1/developers', { body: { email: 'ada@example.com', name: 'Ada' } })).status, 201);
    const body = { developer: 'ada@example.com', name: 'billing', product: 'hello' };
    const headers = { 'idempotency-key': '7c0a6a52-retry' };
    const created = await first('POST', '/v1/apps', '/v1/apps', { body, headers });
    assert.equal(created.status, 201);
    const retried = await second('POST', '/v1/apps', '/v1/apps', { body, headers });
    assert.equal(retried.headers.get('idempotent-replayed'), 'true');
    const { secret: _shown, ...withoutSecret } = created.body;
    assert.deepEqual(retried.body, withoutSecret);

    const other = gateways[1]!.url;
    const issued = await tokenRequest(other, { grant_type: 'client_credentials' }, { key: created.body.key, secret: created.body.secret });
    assert.equal(issued.status, 200, issued.text);
    assert.equal((await call(`${gateways[0]!.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 200);

    const revoked = await second('POST', '/v1/tokens/revoke', '/v1/tokens/revoke', { body: { app: created.body.id } });
    assert.deepEqual(revoked.body, { revoked: 1 });
    assert.equal((await call(`${gateways[0]!.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 401);

    const imported = { key: 'kong-client-id-000001', secret: 'kong-client-secret-0000000001' };
    assert.equal((await second('POST', '/v1/apps/{app}/keys/import', `/v1/apps/${created.body.id}/keys/import`, { body: imported })).status, 201);
    assert.equal((await tokenRequest(gateways[0]!.url, { grant_type: 'client_credentials' }, imported)).status, 200);
  });
});
