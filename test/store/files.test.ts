// world-readable-database: the database, its -wal and -shm files and the secret key hold every
// app's secret hash and token digest; only the gateway's user may read them, whatever the umask.
import assert from 'node:assert/strict';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createApp, createDeveloper } from '../../src/admin/operations.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/host/index.ts';
import { adminDeps, configYaml, tempDir, tokenRequest } from '../helpers.ts';

const modeOf = (file: string) => (statSync(file).mode & 0o777).toString(8);

describe('world-readable-database', () => {
  const temp = tempDir();
  const configFile = path.join(temp.dir, 'gateway.yaml');
  let umask: number;
  before(() => {
    // The loosest umask there is: nothing the gateway creates may rely on it.
    umask = process.umask(0);
    writeFileSync(configFile, configYaml().replace('path: ./gateway.db', 'path: ./data/gw.db'));
  });
  after(() => {
    process.umask(umask);
    temp.remove();
  });

  async function start(): Promise<{ gateway: Gateway; logs: string[] }> {
    const logs: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString('utf8'));
        done();
      },
    });
    const config = loadConfigFile(configFile, { env: {} });
    return { gateway: await startGateway({ config, port: 0, logger: createLogger('info', sink) }), logs };
  }

  test('world-readable-database: the folder is made 0700 and the database, -wal, -shm and key files 0600 under umask 000', async () => {
    const { gateway, logs } = await start();
    const admin = adminDeps(gateway, loadConfigFile(configFile, { env: {} }));
    await createDeveloper(admin, { email: 'files@example.com', name: 'Files' });
    const app = await createApp(admin, { developer: 'files@example.com', name: 'files', product: 'hello' });
    assert.equal((await tokenRequest(gateway.url, { grant_type: 'client_credentials' }, app)).status, 200);
    const data = path.join(temp.dir, 'data');
    assert.deepEqual(
      ['', 'gw.db', 'gw.db-wal', 'gw.db-shm', 'gw.db.key'].map((f) => [f, modeOf(path.join(data, f))]),
      [
        ['', '700'],
        ['gw.db', '600'],
        ['gw.db-wal', '600'],
        ['gw.db-shm', '600'],
        ['gw.db.key', '600'],
      ],
    );
    assert.equal(logs.filter((l) => l.includes('readable or writable by others')).length, 0);
    await gateway.close();
  });

  test('world-readable-database: a database file made wider earlier is named in a warning at start', async () => {
    const db = path.join(temp.dir, 'data', 'gw.db');
    chmodSync(db, 0o644);
    const { gateway, logs } = await start();
    await gateway.close();
    const warning = logs.map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => l.msg.includes('readable or writable by others'));
    assert.deepEqual(warning && { level: warning.level, msg: warning.msg }, { level: 40, msg: `${db} is readable or writable by others (mode 0644): chmod 600 it` });
  });
});
