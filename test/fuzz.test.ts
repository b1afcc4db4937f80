// Property-based tests (fast-check) of the parsers that see untrusted or hand-written input: the
// config loader, the Basic decoder, the path normaliser and the form parser. Each answers with its
// own error or a value, never a crash; and over HTTP, never a 500.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { ConfigError, parseConfig } from '../src/config/load.ts';
import { GatewayError } from '../src/errors.ts';
import { splitTarget } from '../src/http/request.ts';
import { presentedCredentials } from '../src/oauth/client-auth.ts';
import { OAuthError } from '../src/oauth/errors.ts';
import { parseForm } from '../src/oauth/form.ts';
import { call, configYaml, startTestGateway, type TestGateway } from './helpers.ts';

const RUNS = { numRuns: 500 };
// Characters that matter to each parser, mixed with anything at all.
const pathChars = fc.constantFrom('/', '.', '%', '2', 'e', 'E', 'f', 'F', '5', 'c', '0', ';', '\\', '?', '&', '=', 'a', 'v', '1', '\0', ' ', '~');
const pathLike = fc.oneof(fc.string({ unit: pathChars, maxLength: 40 }).map((s) => `/${s}`), fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }));

describe('fuzzing', () => {
  test('config loader: any text is a Config or a ConfigError naming where', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.jsonValue({ maxDepth: 4 }).map((v) => stringify(v))), (text) => {
        try {
          parseConfig(text, 'fuzz.yaml', { env: {} });
        } catch (err) {
          assert.ok(err instanceof ConfigError, `${(err as Error).name}: ${(err as Error).message}`);
        }
      }),
      RUNS,
    );
  });

  test('config loader: a valid config with one value replaced is a Config or a ConfigError', () => {
    const base = configYaml();
    const lines = base.split('\n');
    const valueLines = lines.map((l, i) => [l, i] as const).filter(([l]) => /:\s*\S/.test(l)).map(([, i]) => i);
    fc.assert(
      fc.property(fc.constantFrom(...valueLines), fc.oneof(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v))), (index, value) => {
        const mutated = [...lines];
        mutated[index] = mutated[index]!.replace(/:\s*.*$/, `: ${value}`);
        try {
          parseConfig(mutated.join('\n'), 'fuzz.yaml', { env: {} });
        } catch (err) {
          assert.ok(err instanceof ConfigError, `${(err as Error).name}: ${(err as Error).message}`);
          for (const issue of err.issues) assert.ok(issue.message.length > 0);
        }
      }),
      RUNS,
    );
  });

  test('Basic decoder: any Authorization header gives credentials or an OAuth error', () => {
    const encoded = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 })).map(([id, secret]) => Buffer.from(`${id}:${secret}`).toString('base64')),
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('base64')),
    );
    const scheme = fc.constantFrom('Basic', 'basic', 'BASIC', 'Bearer', '', 'Basic  ');
    fc.assert(
      fc.property(scheme, encoded, fc.option(fc.string({ maxLength: 10 })), (s, e, formId) => {
        const req = { headers: { authorization: `${s} ${e}` }, rawHeaders: ['Authorization', `${s} ${e}`] } as unknown as IncomingMessage;
        const form = new Map(formId === null ? [] : [['client_id', formId]]);
        try {
          const creds = presentedCredentials(req, form);
          assert.equal(creds.method, 'client_secret_basic');
          assert.ok(creds.id.length > 0);
        } catch (err) {
          assert.ok(err instanceof OAuthError, `${(err as Error).name}: ${(err as Error).message}`);
          assert.ok(err.status === 400 || err.status === 401);
        }
      }),
      RUNS,
    );
  });

  test('path normaliser: a path it accepts has no dot segment, empty segment, encoded separator, NUL or ";"', () => {
    fc.assert(
      fc.property(pathLike, (url) => {
        try {
          const { path, query } = splitTarget(url);
          assert.equal(url, query === '' && !url.includes('?') ? path : `${path}?${query}`);
          assert.ok(path.startsWith('/'));
          for (const segment of path.split('/').slice(1, -1)) assert.ok(segment !== '' && segment !== '.' && segment !== '..', path);
          assert.ok(!/%(2f|5c|00|2e)|[\\;\0]/i.test(path), path);
        } catch (err) {
          assert.ok(err instanceof GatewayError && (err.status === 400 || err.status === 414), String(err));
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('form parser: any body is a map without repeats or an OAuth error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: fc.constantFrom('a', '=', '&', '%', '+', '2', 'F', 'x', ' '), maxLength: 40 })), (body) => {
        try {
          const form = parseForm(body);
          for (const value of form.values()) assert.ok(value !== '', 'empty values are absent');
        } catch (err) {
          assert.ok(err instanceof OAuthError && err.status === 400, String(err));
        }
      }),
      RUNS,
    );
  });
});

describe('fuzzing over HTTP: never a 500', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  test('random paths, with and without a token', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: pathChars, maxLength: 30 }), fc.boolean(), async (path, withToken) => {
        const target = `/${encodeURI(path).replace(/%25/g, '%')}`;
        let res;
        try {
          res = await call(`${gw.url}${target}`, withToken ? { headers: { authorization: 'Bearer gwat_x' } } : {});
        } catch {
          return; // fetch refused to send it
        }
        assert.ok(res.status < 500, `${target}: ${res.status}`);
      }),
      { numRuns: 200 },
    );
  });

  test('random token requests: headers, bodies, content types', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 80 }),
        fc.constantFrom('application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=latin1', 'application/json', 'text/plain', ''),
        async (authorization, body, type) => {
          let res;
          try {
            res = await call(`${gw.url}/oauth2/token`, { method: 'POST', headers: { authorization: `Basic ${authorization}`, 'content-type': type }, body });
          } catch {
            return; // not a valid header value for fetch
          }
          assert.ok(res.status < 500, `${res.status}: ${res.text}`);
        },
      ),
      { numRuns: 200 },
    );
  });
});
