// Authorization codes for the benchmark of the authorization_code grant: each is spent once, so
// the load needs one per request. They are issued as the flow issues them (src/oauth/authorize/code.ts),
// straight into the store of the gateway under test (SQLite in WAL mode takes a second writer),
// all bound to one redirect URI and one PKCE challenge.
import { createHash, randomBytes } from 'node:crypto';
import { loadConfigFile } from '../../src/config/load.ts';
import { issueCode } from '../../src/oauth/authorize/code.ts';
import { openStore } from '../../src/store/open.ts';

export const BENCH_REDIRECT_URI = 'http://127.0.0.1:1/callback';

/** `count` codes of the app `key` of `product`, and the verifier that redeems them. */
export async function mintCodes(configFile: string, key: string, product: string, count: number): Promise<{ codes: string[]; verifier: string }> {
  const config = loadConfigFile(configFile, { env: {} });
  const store = await openStore(config.store);
  try {
    const app = await store.apps.findAppByKey(key);
    if (app === undefined) throw new Error(`no app with key ${key}`);
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const settings = config.products.get(product)!;
    const codes: string[] = [];
    for (let i = 0; i < count; i++) {
      codes.push(await issueCode(store, { appId: app.id, key, product: settings, scope: '', subject: `user-${i}`, redirectUri: BENCH_REDIRECT_URI, challenge, now: Date.now() }));
    }
    return { codes, verifier };
  } finally {
    await store.close();
  }
}
