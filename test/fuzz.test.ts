// Property-based tests (fast-check) of the parsers that see untrusted or hand-written input: the
// config loader, and every parser of client bytes (paths, query strings, forms, multipart bodies,
// JSON bodies, parameters of every style, headers, cookies, Basic credentials). Each answers with
// its own error or a value, never a crash, and within a time bound per input (inputs run to 16 KiB:
// a parser that turned quadratic would take seconds); and over HTTP, never a 500.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { ConfigError, parseConfig } from '../src/config/load.ts';
import { GatewayError } from '../src/errors.ts';
import { parseAuthorization } from '../src/http/authorization.ts';
import { readMultipart, type Part } from '../src/http/multipart.ts';
import { formFields } from '../src/http/query.ts';
import { cookieValues, mediaParameters, queryObject, splitTarget } from '../src/http/request.ts';
import { parseJsonBody } from '../src/json/body.ts';
import { compileParameter, type ParameterSpec, type Read } from '../src/openapi/parameters.ts';
import { parseQuery } from '../src/openapi/query-parameters.ts';
import { Documents } from '../src/openapi/validators.ts';
import type { RequestContext } from '../src/pipeline/context.ts';
import { presentedCredentials } from '../src/oauth/client-auth.ts';
import { OAuthError } from '../src/oauth/errors.ts';
import { parseForm } from '../src/oauth/form.ts';
import { call, configYaml, startTestGateway, tempDir, type Answer, type TestGateway } from './helpers.ts';

const RUNS = { numRuns: 500 };
// Characters that matter to each parser, mixed with anything at all.
const pathChars = fc.constantFrom('/', '.', '%', '2', 'e', 'E', 'f', 'F', '5', 'c', '0', ';', '\\', '?', '&', '=', 'a', 'v', '1', '\0', ' ', '~');
const pathLike = fc.oneof(
  fc.string({ unit: pathChars, maxLength: 40 }).map((s) => `/${s}`),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

describe('fuzzing', () => {
  test('config loader: any text is a Config or a ConfigError naming where', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.jsonValue({ maxDepth: 4 }).map((v) => stringify(v)),
        ),
        (text) => {
          try {
            parseConfig(text, 'fuzz.yaml', { env: {} });
          } catch (err) {
            assert.ok(err instanceof ConfigError, `${(err as Error).name}: ${(err as Error).message}`);
          }
        },
      ),
      RUNS,
    );
  });

  test('config loader: a valid config with one value replaced is a Config or a ConfigError', () => {
    const base = configYaml();
    const lines = base.split('\n');
    const valueLines = lines
      .map((l, i) => [l, i] as const)
      .filter(([l]) => /:\s*\S/.test(l))
      .map(([, i]) => i);
    fc.assert(
      fc.property(
        fc.constantFrom(...valueLines),
        fc.oneof(
          fc.string({ maxLength: 30 }),
          fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
        ),
        (index, value) => {
          const mutated = [...lines];
          mutated[index] = mutated[index]!.replace(/:\s*.*$/, `: ${value}`);
          try {
            parseConfig(mutated.join('\n'), 'fuzz.yaml', { env: {} });
          } catch (err) {
            assert.ok(err instanceof ConfigError, `${(err as Error).name}: ${(err as Error).message}`);
            for (const issue of err.issues) assert.ok(issue.message.length > 0);
          }
        },
      ),
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

/** A linear parser reads 16 KiB in well under a millisecond; one input that takes this long has found something worse. */
const PER_INPUT_MS = 250;

/** `check`, failing when one input takes longer than PER_INPUT_MS twice in a row (once may be a pause of the machine's). */
function within<T extends unknown[]>(check: (...args: T) => void): (...args: T) => void {
  const timed = (args: T) => {
    const start = performance.now();
    check(...args);
    return performance.now() - start;
  };
  return (...args) => {
    if (timed(args) < PER_INPUT_MS) return;
    const ms = timed(args);
    assert.ok(ms < PER_INPUT_MS, `one input took ${ms.toFixed(0)} ms, twice: ${JSON.stringify(args).slice(0, 300)}`);
  };
}

/** Client text: short strings of the characters that matter to a parser, anything at all, or a short piece repeated up to 16 KiB. */
function clientText(chars: string): fc.Arbitrary<string> {
  const short = fc.string({ unit: fc.constantFrom(...chars), maxLength: 60 });
  const repeated = fc.tuple(short, fc.integer({ min: 1, max: 16 * 1024 })).map(([piece, bytes]) => (piece === '' ? '' : piece.repeat(Math.ceil(bytes / piece.length))));
  return fc.oneof(short, fc.string({ unit: 'binary', maxLength: 60 }), repeated);
}

/** What a parameter reader may answer: a string, a list or an object of strings; absent; or an error. */
function assertRead(read: Read, what: string): void {
  if ('error' in read) {
    assert.equal(typeof read.error, 'string', what);
    return;
  }
  if ('absent' in read) {
    assert.equal(read.absent, true, what);
    return;
  }
  const { value } = read;
  if (typeof value === 'string') return;
  const items = Array.isArray(value) ? value : Object.values(value);
  assert.ok(
    items.every((item) => typeof item === 'string'),
    what,
  );
}

/** A reader of every style each location allows, with every shape and explode it may have (OAS 3.1.1 "Style Values"). */
const READERS = (
  [
    ['path', 'simple'],
    ['path', 'label'],
    ['path', 'matrix'],
    ['header', 'simple'],
    ['query', 'form'],
    ['query', 'spaceDelimited'],
    ['query', 'pipeDelimited'],
    ['query', 'deepObject'],
    ['cookie', 'form'],
  ] as const
).flatMap(([location, style]) =>
  (['primitive', 'array', 'object'] as const).flatMap((shape) =>
    [true, false].flatMap((explode) => {
      const spec: ParameterSpec = { name: 'p', in: location, style, explode, shape, ...(shape === 'object' && location === 'query' && style === 'form' && explode && { otherQueryNames: ['q'] }) };
      try {
        return [{ what: `${location} ${style} ${shape} explode=${explode}`, location, read: compileParameter(spec) }];
      } catch {
        return []; // a combination the specification does not define
      }
    }),
  ),
);

describe('fuzzing every parser of client bytes, each input within a time bound', () => {
  const readers = READERS;
  const RUNS_LARGE_INPUTS = { numRuns: 300 };

  test('paths and query strings: splitTarget, the query object and every query style answer or refuse', () => {
    fc.assert(
      fc.property(
        clientText('/.%2e5Cc;\\?&=a1[]'),
        clientText('pq=&%2C5BD+,|[]. ;e1-'),
        within((pathPart, query) => {
          try {
            splitTarget(`/${pathPart}?${query}`);
          } catch (err) {
            assert.ok(err instanceof GatewayError && (err.status === 400 || err.status === 414), String(err));
          }
          queryObject(query);
          const parsedQuery = parseQuery(query);
          for (const r of readers) if (r.location === 'query') assertRead(r.read({ path: {}, headers: {}, parsedQuery }), r.what);
        }),
      ),
      RUNS_LARGE_INPUTS,
    );
  });

  test('path, header and cookie parameters of every style answer or refuse', () => {
    const empty = parseQuery('');
    fc.assert(
      fc.property(
        clientText('p=.;,%2CR1 \t"'),
        within((raw) => {
          for (const r of readers) {
            if (r.location === 'path') assertRead(r.read({ path: { p: raw }, headers: {}, parsedQuery: empty }), r.what);
            if (r.location === 'header') assertRead(r.read({ path: {}, headers: { p: raw }, parsedQuery: empty }), r.what);
            if (r.location === 'cookie') assertRead(r.read({ path: {}, headers: { cookie: raw }, parsedQuery: empty }), r.what);
          }
        }),
      ),
      RUNS_LARGE_INPUTS,
    );
  });

  test('headers and cookies: Content-Type parameters, Authorization, Cookie', () => {
    fc.assert(
      fc.property(
        clientText('a=; "\\\tb,'),
        within((value) => {
          const params = mediaParameters(`multipart/form-data${value}`);
          if (params !== undefined) for (const [name] of params) assert.equal(name, name.toLowerCase());
          const { scheme } = parseAuthorization(value);
          assert.equal(scheme, scheme.toLowerCase());
          for (const found of cookieValues(value, 'b')) assert.equal(typeof found, 'string');
        }),
      ),
      RUNS_LARGE_INPUTS,
    );
  });

  test('JSON bodies: any bytes are the value JSON.parse makes of them, or a failure with a pointer', () => {
    const jsonText = fc.oneof(
      clientText('{}[]",:0123456789.eE+-\\u d8 tnf'),
      fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
    );
    fc.assert(
      fc.property(
        jsonText,
        within((text) => {
          const parsed = parseJsonBody(Buffer.from(text), '/body');
          if ('value' in parsed) assert.deepEqual(parsed.value, JSON.parse(text));
          else assert.ok(parsed.pointer.startsWith('/body') && parsed.message.length > 0);
        }),
      ),
      RUNS_LARGE_INPUTS,
    );
    // What JSON.stringify writes has no repeated member and only numbers a double holds: it is accepted as it is.
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        within((value) => {
          const text = JSON.stringify(value);
          assert.deepEqual(parseJsonBody(Buffer.from(text), '/body'), { value: JSON.parse(text) });
        }),
      ),
      RUNS_LARGE_INPUTS,
    );
  });

  test('forms: formFields keeps every value in order; an OpenAPI form, JSON or multipart body is accepted or refused with a 4xx', async () => {
    const temp = tempDir();
    const file = path.join(temp.dir, 'fuzz.yaml');
    writeFileSync(
      file,
      `openapi: 3.0.3
info: { title: Fuzz, version: '1' }
paths:
  /items:
    post:
      requestBody:
        content:
          application/json: { schema: { type: object, properties: { n: { type: integer }, t: { type: array, items: { type: number } } } } }
          application/x-www-form-urlencoded: { schema: { type: object, properties: { n: { type: integer }, t: { type: array, items: { type: number } } } } }
          multipart/form-data: { schema: { type: object, properties: { n: { type: integer }, t: { type: array, items: { type: number } }, f: { type: string, format: binary } } } }
      responses: { '200': { description: ok } }
`,
    );
    const documents = new Documents();
    const doc = documents.load(file);
    temp.remove();
    const step = documents.validators(doc).request(doc.operations[0]!, '/items', 1024 * 1024);
    const types = ['application/x-www-form-urlencoded', 'application/json', 'multipart/form-data; boundary=XX'];
    const refusal = (err: unknown) => assert.ok(err instanceof GatewayError && err.status >= 400 && err.status < 500, String(err));
    await fc.assert(
      fc.asyncProperty(clientText('n=1.0&t[]%2C+;-XX\r\n{}:"'), fc.constantFrom(...types), async (body, type) => {
        let pending: unknown;
        within(() => {
          const fields = formFields(body);
          const params = new URLSearchParams(body);
          for (const [name, values] of fields) assert.deepEqual(values, params.getAll(name));
          const ctx = { req: { headers: { 'content-type': type, 'content-length': String(body.length) } }, path: '/items', query: '', body: Buffer.from(body, 'latin1') } as unknown as RequestContext;
          try {
            // The body is read already: the whole check runs before the step's promise is returned.
            pending = step(ctx);
          } catch (err) {
            refusal(err);
          }
        })();
        if (pending instanceof Promise) await pending.then(() => {}, refusal);
      }),
      RUNS_LARGE_INPUTS,
    );
  });

  test('multipart bodies: any bytes are parts or a problem; what readMultipart accepts, undici reads alike', async () => {
    const name = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ';', '=', '"', '\\', '%', 'é', '*'), minLength: 0, maxLength: 6 });
    const value = fc.string({ unit: fc.constantFrom('1', 'x', '\r', '\n', '-', 'X', ' ', 'é'), maxLength: 12 });
    const header = fc.constantFrom('', 'Content-Type: text/plain\r\n', 'Content-Type: text/plain; charset=iso-8859-1\r\n', 'Content-Transfer-Encoding: base64\r\n', ' folded\r\n', 'X-A: b\r\n');
    const part = fc.record({ name, value, header, file: fc.option(name), quoted: fc.boolean() });
    const body = fc.record({
      parts: fc.array(part, { maxLength: 4 }),
      newline: fc.constantFrom('\r\n', '\r\n', '\n'),
      preamble: fc.constantFrom('', '', 'junk\r\n'),
      epilogue: fc.constantFrom('', '', '\r\n', 'junk'),
    });
    await fc.assert(
      fc.asyncProperty(body, async ({ parts, newline, preamble, epilogue }) => {
        const nl = newline;
        const text =
          preamble +
          parts
            .map((p) => `--XX${nl}${p.header}Content-Disposition: form-data; name=${p.quoted ? `"${p.name}"` : p.name}${p.file === null ? '' : `; filename="${p.file}"`}${nl}${nl}${p.value}${nl}`)
            .join('') +
          `--XX--${epilogue}`;
        const bytes = Buffer.from(text);
        let read: ReturnType<typeof readMultipart> | undefined;
        within(() => {
          read = readMultipart(bytes, 'XX');
        })();
        if (read === undefined || 'problem' in read) return;
        let theirs: [string, string][];
        try {
          const form = await new Response(bytes, { headers: { 'content-type': 'multipart/form-data; boundary=XX' } }).formData();
          theirs = [...form].map(([n, v]): [string, string] => [n, typeof v === 'string' ? v : `file:${v.name}`]);
        } catch {
          return; // undici is stricter here: nothing reaches an upstream that reads it otherwise
        }
        const ours = read.parts.map((p: Part): [string, string] => [p.name, p.kind === 'field' ? p.value : `file:${p.filename}`]);
        assert.deepEqual(ours, theirs, JSON.stringify(text));
      }),
      { numRuns: 500 },
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
        let res: Answer;
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
          let res: Answer;
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
