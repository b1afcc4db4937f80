// `gateway admin keys list | rotate | revoke KID` from another process, against a gateway serving
// on the same SQLite file with two worker threads: both threads hear of a revoked key through the
// store's change feed and refuse its tokens at once; no restart, no file edit.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { get } from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { bearer, call, configYaml, tempDir, TEST_REDIS_URL, tokenRequest } from '../helpers.ts';
import { gateway, serve, type Result, type Served } from '../e2e/children.ts';

const signed = {
  oauth: '  issuer: http://localhost:8080\n  signing:\n    publishAhead: 2s\n    rotateEvery: 1h',
  products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt\n    accessTokenLifetime: 10m',
};

function ok(r: Result): string {
  assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, r.stderr);
  return r.stdout;
}

interface KeyRow {
  kid: string;
  algorithm: string;
  status: string;
  activatesAt: number;
  retiresAt: number | null;
  unpublishedAt: number | null;
}

describe('gateway admin keys: signing keys from another process', { skip: TEST_REDIS_URL === undefined ? undefined : 'one SQLite file shared by two processes' }, () => {
  const temp = tempDir();
  const config = path.join(temp.dir, 'gateway.yaml');
  let served: Served;
  let app: { key: string; secret: string };
  /** The key `keys rotate` added: it signs once publishAhead (2 s) has passed. */
  let next: string | undefined;
  const cli = (...args: string[]) => gateway(['admin', ...args, '--config', config]);
  before(async () => {
    writeFileSync(config, `${configYaml(signed)}\nworkers: 2\n`);
    served = await serve(config);
    ok(await cli('developers', 'create', '--email', 'dev@example.com', '--name', 'Dev'));
    app = JSON.parse(ok(await cli('apps', 'create', '--developer', 'dev@example.com', '--name', 'a', '--product', 'signed', '--json'))) as { key: string; secret: string };
  });
  after(async () => {
    await served.stop();
    temp.remove();
  });

  const issue = async () => {
    const res = await tokenRequest(served.url, { grant_type: 'client_credentials' }, app);
    assert.equal(res.status, 200, res.text);
    return res.body.access_token as string;
  };
  const published = async () => ((await (await fetch(`${served.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet).keys.map((k) => k.kid);

  test('list shows the key the gateway made, signing; rotate adds the next, published now and signing after publishAhead', async () => {
    const token = await issue();
    const [first] = JSON.parse(ok(await cli('keys', 'list', '--json'))) as KeyRow[];
    assert.equal(first!.kid, decodeProtectedHeader(token).kid);
    assert.equal(first!.algorithm, 'ES256');
    assert.equal(first!.status, 'signing');
    assert.equal(first!.retiresAt, null);
    const text = ok(await cli('keys', 'list'));
    assert.match(text.split('\n')[0]!, /^KID +ALGORITHM +STATUS +CREATED +SIGNS +RETIRES +UNPUBLISHED$/);
    const rotated = await cli('keys', 'rotate', '--json');
    const added = JSON.parse(ok(rotated)) as KeyRow;
    next = added.kid;
    assert.equal(added.status, 'next');
    assert.equal(JSON.parse(rotated.stderr).audit, 'signing-key.rotate');
    // The serving gateway reads the keys again once it hears of the change: within moments, and long before publishAhead ends.
    let kids = await published();
    for (let i = 0; i < 40 && kids.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      kids = await published();
    }
    assert.deepEqual(kids, [first!.kid, added.kid]);
    const listed = JSON.parse(ok(await cli('keys', 'list', '--json'))) as KeyRow[];
    assert.equal(listed[0]!.retiresAt, added.activatesAt);
    assert.equal(listed[0]!.unpublishedAt, added.activatesAt + 11 * 60_000, 'the longest lifetime (10m) and a minute of skew after it retires');
  });

  test("revoke KID: out of the serving gateway's JWKS and its tokens refused at once; an unknown kid is an error and changes nothing", async () => {
    // The key that signs now: the one `keys rotate` added, once its turn has come.
    let token = await issue();
    for (let i = 0; i < 100 && decodeProtectedHeader(token).kid !== next; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      token = await issue();
    }
    const kid = decodeProtectedHeader(token).kid!;
    assert.equal(kid, next);
    assert.equal((await call(`${served.url}/v1/hello`, { headers: bearer(token) })).status, 200);
    const revoked = await cli('keys', 'revoke', kid);
    const out = ok(revoked);
    assert.match(out, new RegExp(`^signing key ${kid} is revoked: out of the JWKS, and every token it signed is refused\nsigning key gwk_[A-Za-z0-9_-]{22} signs from now on\n$`));
    assert.equal(JSON.parse(revoked.stderr).audit, 'signing-key.revoke');
    // Each call on a connection of its own, which either thread may take.
    const onNewConnection = () =>
      new Promise<number>((resolve, reject) => {
        get(`${served.url}/v1/hello`, { agent: false, headers: bearer(token) }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        }).on('error', reject);
      });
    for (let i = 0; i < 8; i++) assert.equal(await onNewConnection(), 401);
    assert.equal((await published()).includes(kid), false);
    const fresh = await issue();
    assert.notEqual(decodeProtectedHeader(fresh).kid, kid);
    assert.equal((await call(`${served.url}/v1/hello`, { headers: bearer(fresh) })).status, 200);
    const again = await cli('keys', 'revoke', kid);
    assert.deepEqual([again.code, again.stdout, again.stderr], [1, '', `error: no unrevoked signing key ${kid}\n`]);
    const malformed = await cli('keys', 'revoke', 'gwk_../../etc');
    assert.deepEqual([malformed.code, malformed.stderr], [1, 'error: a signing key id is gwk_ and 22 letters, digits, "-" or "_" (see `gateway admin keys list`)\n']);
  });

  test('signing keys are not managed over --url', async () => {
    const r = await gateway(['admin', 'keys', 'list', '--config', config, '--url', 'http://127.0.0.1:9'], { GATEWAY_MANAGEMENT_KEY: 'k', GATEWAY_MANAGEMENT_SECRET: 's' });
    assert.deepEqual([r.code, r.stderr], [1, 'error: signing keys are managed on the store the config names: run this command without --url (and without GATEWAY_MANAGEMENT_URL)\n']);
  });
});
