// Every parser that reads client bytes runs in time linear in what it reads: one request must never
// hold the event loop for seconds. Each is fed adversarial input (the shapes that once made a parser
// quadratic, and their kin) in sizes four times apart up to the limit that bounds it in a default
// configuration, and past a small limit where the parser has no length check of its own (at 8 KiB
// a quadratic parser hides behind its fixed cost per call); its time per byte may not keep growing
// from one size to the next. Linear time keeps
// it level (1×), n log n about 1.2×, quadratic time quadruples it at every step. A single step may
// jump once (a string past V8's large-object size costs a page mapping each time), so it fails only
// on two steps in a row of 2.5× or more. Growth between sizes, never an absolute time: machines
// differ threefold.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { normaliseEmail } from '../src/admin/operations.ts';
import { GatewayError } from '../src/errors.ts';
import { createClientIp } from '../src/http/ip.ts';
import { readMultipart } from '../src/http/multipart.ts';
import { formFields } from '../src/http/query.ts';
import { cookieValues, mediaParameters, queryObject, splitTarget } from '../src/http/request.ts';
import { parseJsonBody } from '../src/json/body.ts';
import { presentedCredentials } from '../src/oauth/client-auth.ts';
import { parseForm } from '../src/oauth/form.ts';
import { compileParameter } from '../src/openapi/parameters.ts';
import { parseQuery } from '../src/openapi/query-parameters.ts';
import { Documents } from '../src/openapi/validators.ts';
import type { RequestContext } from '../src/pipeline/context.ts';
import { tempDir } from './helpers.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
/** The limits of a default configuration: listen.maxBodySize, Node's header block, the request target, the OAuth and portal forms, a protected route's form. */
const LIMITS = { body: 10 * MiB, headers: 16 * KiB, target: 8 * KiB, oauthForm: 16 * KiB, bearerForm: 64 * KiB };
/** How far a parser without a length check of its own is measured past a smaller limit. */
const AT_LEAST = 256 * KiB;

/** The least time of one call, in ms: the best of up to five batches, each of calls until 5 ms have passed. */
async function timePerCall(run: () => unknown): Promise<number> {
  let best = Infinity;
  const began = performance.now();
  for (let batch = 0; batch < 5 && (batch < 2 || performance.now() - began < 1000); batch++) {
    let calls = 0;
    const start = performance.now();
    let elapsed = 0;
    do {
      const pending = run();
      if (pending instanceof Promise) await pending;
      calls++;
      elapsed = performance.now() - start;
    } while (elapsed < 5);
    best = Math.min(best, elapsed / calls);
  }
  return best;
}

/**
 * Times `run` on inputs of `limit` bytes and of a quarter, a sixteenth… of it, down to 256 bytes
 * (the smallest first: quadratic time is caught before the large sizes take minutes), and past a
 * limit under AT_LEAST unless `limited` (the parser refuses longer input itself); fails when the
 * time per byte grows 2.5× or more at two sizes in a row.
 */
async function assertLinear<T>(limit: number, make: (bytes: number) => T, run: (input: T) => unknown, limited = false): Promise<void> {
  const sizes: number[] = [];
  for (let bytes = limit; bytes >= 256; bytes = Math.floor(bytes / 4)) sizes.unshift(bytes);
  if (!limited) for (let bytes = limit * 4; bytes <= AT_LEAST; bytes *= 4) sizes.push(bytes);
  await run(make(sizes[0]!));
  const seen: { bytes: number; perByte: number }[] = [];
  for (const bytes of sizes) {
    const input = make(bytes);
    seen.push({ bytes, perByte: (await timePerCall(() => run(input))) / bytes });
    const [a, b, c] = seen.slice(-3);
    if (c === undefined) continue;
    const growth = [b!.perByte / a!.perByte, c.perByte / b!.perByte];
    assert.ok(
      growth.some((g) => g < 2.5),
      `the time per byte grew ${growth.map((g) => `${g.toFixed(1)}×`).join(' and ')} from ${a!.bytes} to ${b!.bytes} to ${c.bytes} bytes (linear: 1×, quadratic: 4×)`,
    );
  }
}

/** `unit` repeated to about `bytes` bytes, between `head` and `tail`. */
const fill = (bytes: number, unit: string, head = '', tail = '') => head + unit.repeat(Math.max(1, Math.floor((bytes - head.length - tail.length) / unit.length))) + tail;

const ignore = (err: unknown) => {
  if (!(err instanceof Error) || err.name === 'TypeError' || err.name === 'RangeError') throw err;
};

describe('parser growth: a JSON body (limit: listen.maxBodySize)', () => {
  const json = (text: string) => Buffer.from(text);
  const cases: [string, (bytes: number) => Buffer][] = [
    ['a number with a long run of zeros (1.000…0001)', (n) => json(fill(n, '0', '{"limit":1.', '1}'))],
    ['a number with a long run of leading zeros after the point (0.000…0001)', (n) => json(fill(n, '0', '[0.', '1]'))],
    ['a long integer (a number no double holds)', (n) => json(fill(n, '9', '[1', ']'))],
    ['many numbers', (n) => json(fill(n, '1.5e-3,', '[', '0]'))],
    ['many members', (n) => json(`{${Array.from({ length: Math.floor(n / 12) }, (_, i) => `"m${i.toString(36).padStart(6, '0')}":0`).join(',')}}`)],
    ['a long member name', (n) => json(fill(n, 'a', '{"', '":1}'))],
    ['strings full of escapes', (n) => json(fill(n, '"\\u0041\\n\\"\\\\\\ud83d\\ude00",', '[', '""]'))],
    ['a name full of surrogate escapes', (n) => json(fill(n, '\\ud83d\\ude00', '{"', '":1}'))],
    ['objects and arrays nested 64 deep, many times', (n) => json(fill(n, `${'['.repeat(63)}${']'.repeat(63)},`, '[', '0]'))],
  ];
  for (const [what, make] of cases) test(what, () => assertLinear(LIMITS.body, make, (body) => parseJsonBody(body, '/body')));
});

describe("parser growth: an OpenAPI operation's request (limit: listen.maxBodySize)", () => {
  const temp = tempDir();
  after(() => temp.remove());
  const file = path.join(temp.dir, 'growth.yaml');
  writeFileSync(
    file,
    `openapi: 3.0.3
info: { title: Growth, version: '1' }
paths:
  /items:
    post:
      operationId: create
      parameters:
        - { name: f, in: query, style: deepObject, explode: true, schema: { type: object, properties: { x: { type: integer } } } }
        - { name: X-Tags, in: header, schema: { type: array, items: { type: string } } }
        - { name: tier, in: cookie, schema: { type: string } }
      requestBody:
        content:
          application/json: { schema: { type: object, properties: { limit: { type: number }, tags: { type: array, items: { type: number } } } } }
          application/x-www-form-urlencoded: { schema: { type: object, properties: { limit: { type: number }, tag: { type: array, items: { type: integer } } } } }
          multipart/form-data: { schema: { type: object, properties: { limit: { type: number }, tag: { type: array, items: { type: integer } }, upload: { type: string, format: binary } } } }
      responses: { '200': { description: ok } }
`,
  );
  const documents = new Documents();
  const doc = documents.load(file);
  const step = documents.validators(doc).request(doc.operations[0]!, '/items', LIMITS.body);
  const request = (headers: Record<string, string>, body: string | undefined, query = ''): RequestContext =>
    ({
      req: { headers: body === undefined ? headers : { ...headers, 'content-length': String(body.length) } },
      path: '/items',
      query,
      body: body === undefined ? undefined : Buffer.from(body, 'latin1'),
    }) as unknown as RequestContext;
  const form = (body: string) => request({ 'content-type': 'application/x-www-form-urlencoded' }, body);
  /** What the step answers, awaited: 'accepted', or the refusal's status and first failure. */
  async function outcome(ctx: RequestContext): Promise<string> {
    try {
      await step(ctx);
      return 'accepted';
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      const first = (err.extensions?.errors as { pointer: string; message: string }[] | undefined)?.[0];
      return `${err.status} ${first === undefined ? err.message : `${first.pointer} ${first.message}`}`;
    }
  }
  const multipart = (body: string) => request({ 'content-type': 'multipart/form-data; boundary=XX' }, body);
  const part = (name: string, value: string, extra = '') => `--XX\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n\r\n${value}\r\n`;

  const inexact = 'must be a number a double holds exactly (no more digits than it keeps, within its range)';
  // Each with what it is answered: the whole input is read, not refused at its first bytes.
  const cases: [string, (bytes: number) => RequestContext, string][] = [
    ['JSON: a number with a long run of zeros', (n) => request({ 'content-type': 'application/json' }, fill(n, '0', '{"limit":1.', '1}')), `400 /body/limit ${inexact}`],
    ['JSON: many numbers', (n) => request({ 'content-type': 'application/json' }, fill(n, '100.25,', '{"tags":[', '0]}')), 'accepted'],
    ['form: a number with a long run of zeros', (n) => form(fill(n, '0', 'limit=1.', '1')), '400 /body/limit must be a plain decimal number, exactly representable'],
    ['form: a field repeated', (n) => form(fill(n, 'tag=7&', '', 'limit=1')), 'accepted'],
    ['form: a field repeated, written with fractions', (n) => form(fill(n, 'tag=7.0&', '', 'limit=1')), '400 /body/tag/0 must be a plain decimal integer, without a fraction'],
    ['form: many fields the schema does not declare', (n) => form(fill(n, 'x[]=1&', '', 'limit=1')), '400 /body/x[] is given more than once'],
    ['multipart: a number with a long run of zeros', (n) => multipart(`${part('limit', fill(n, '0', '1.', '1'))}--XX--\r\n`), '400 /body/limit must be a plain decimal number, exactly representable'],
    ['multipart: a field repeated, past 1,000 parts', (n) => multipart(fill(n, part('tag', '7'), '', '--XX--\r\n')), '400 /body has more than 1000 parts'],
    // What made the old part-header scan quadratic; read in one pass, it is refused at its first part.
    ['multipart: boundaries with no blank line until the end', (n) => multipart(fill(n, '--XX\r\n', '', '\r\n')), '400 /body has a part without a blank line after its headers'],
    [
      'multipart: a part with many header lines',
      (n) => multipart(`--XX\r\n${fill(n, 'X-A: b\r\n')}Content-Disposition: form-data; name="limit"\r\n\r\n1\r\n--XX--\r\n`),
      '400 /body has a part whose headers are longer than 8 KiB',
    ],
    ['multipart: content full of near-boundaries', (n) => multipart(`${part('upload', fill(n, '\r\n--X\r\n-'), '; filename="a"')}--XX--\r\n`), 'accepted'],
    ['multipart: many files', (n) => multipart(fill(n, part('upload', 'x', '; filename="a"'), '', '--XX--\r\n')), '400 /body/upload is given more than once'],
  ];
  for (const [what, make, answer] of cases) {
    test(what, async () => {
      assert.equal(await outcome(make(64 * KiB)), answer);
      await assertLinear(LIMITS.body, make, outcome);
    });
  }

  test('parameters: a deepObject of many properties, a long header list, a long cookie header', async () => {
    const deep = (n: number) => request({}, undefined, fill(n, 'f[x]=1.0&'));
    assert.equal(await outcome(deep(4 * KiB)), '400 /query/f query parameter f: property x is given more than once');
    await assertLinear(LIMITS.target, deep, outcome);
    const list = (n: number) => request({ 'x-tags': fill(n, 'a, ', '', 'b') }, undefined);
    assert.equal(await outcome(list(4 * KiB)), 'accepted');
    await assertLinear(LIMITS.headers, list, outcome);
    // A cookie named with an escape is looked for through the whole header.
    for (const unit of ['other=1; ', '%=1; ', '%ZZ=1; ', 'ti%65=1; ']) {
      const cookies = (n: number) => request({ cookie: fill(n, unit, '', 'ti%65r=2') }, undefined);
      assert.equal(await outcome(cookies(4 * KiB)), "400 /cookie/tier cookie parameter tier is spelled otherwise (a percent-escape, '+' or '.'), as PHP reads its name", unit);
      await assertLinear(LIMITS.headers, cookies, outcome);
    }
  });
});

describe('parser growth: the request line and headers (limits: 8 KiB target, 16 KiB headers)', () => {
  test('paths: escapes, segments, escapes of non-ASCII characters', async () => {
    for (const unit of ['%24', 'a/', '%C3%A9', '%E2%88%95', '%EF%BC%8E', '/.', '%']) {
      const split = (target: string) => {
        try {
          splitTarget(target);
        } catch (err) {
          ignore(err);
        }
      };
      // Longer targets are 414 before anything is read.
      await assertLinear(LIMITS.target, (n) => fill(n, unit, '/'), split, true);
    }
  });

  test('query strings: as a query object, as parameters, as every style reads them', async () => {
    const readers = [
      compileParameter({ name: 'q', in: 'query', shape: 'array' }),
      compileParameter({ name: 'q', in: 'query', shape: 'array', explode: false }),
      compileParameter({ name: 'q', in: 'query', shape: 'array', style: 'pipeDelimited' }),
      compileParameter({ name: 'q', in: 'query', shape: 'object', style: 'deepObject' }),
      compileParameter({ name: 'q', in: 'query', shape: 'object', otherQueryNames: [] }),
    ];
    for (const unit of ['q=1&', 'q=a,b,c%2C&', 'q[a]=1&', 'q=%7C|%7C&', 'a=1;', '&&']) {
      await assertLinear(
        LIMITS.target,
        (n) => fill(n, unit),
        (query) => {
          queryObject(query);
          const parsedQuery = parseQuery(query);
          for (const read of readers) read({ path: {}, headers: {}, parsedQuery });
        },
      );
    }
  });

  test('headers: Content-Type parameters, cookies, Basic credentials, X-Forwarded-For, header and cookie parameters of every style', async () => {
    await assertLinear(LIMITS.headers, (n) => fill(n, '; a=b', 'multipart/form-data'), mediaParameters);
    await assertLinear(LIMITS.headers, (n) => fill(n, '\\"', 'text/plain; a="'), mediaParameters);
    await assertLinear(
      LIMITS.headers,
      (n) => fill(n, 'a=1; '),
      (header) => cookieValues(header, 'a'),
    );
    const basic = (n: number) => ({ headers: { authorization: `Basic ${Buffer.from(fill(n * 0.75, '%41', 'id:')).toString('base64')}` }, rawHeaders: [] }) as unknown as IncomingMessage;
    await assertLinear(LIMITS.headers, basic, (req) => presentedCredentials(req, new Map()));
    const clientIp = createClientIp(['10.0.0.0/8']);
    await assertLinear(LIMITS.headers, (n) => ({ socket: { remoteAddress: '10.0.0.1' }, headers: { 'x-forwarded-for': fill(n, '10.1.2.3, ') } }) as unknown as IncomingMessage, clientIp);
    const readers = [
      compileParameter({ name: 'X-A', in: 'header', shape: 'array' }),
      compileParameter({ name: 'X-A', in: 'header', shape: 'object', explode: true }),
      compileParameter({ name: 'a', in: 'cookie', shape: 'array', explode: false }),
      compileParameter({ name: 'a', in: 'cookie', shape: 'object', explode: false }),
    ];
    for (const unit of ['a,b,', 'k=v,', 'a=1; ', '%61=1; ']) {
      await assertLinear(
        LIMITS.headers,
        (n) => fill(n, unit),
        (value) => {
          for (const read of readers) read({ path: {}, headers: { 'x-a': value, cookie: value }, parsedQuery: parseQuery('') });
        },
      );
    }
  });
});

describe('parser growth: forms of the OAuth endpoints, the portal and a protected route', () => {
  test('form bodies: many fields, one long field', async () => {
    for (const unit of ['a=1&', 'tag=1&', '%41%42=%43&', '+']) {
      await assertLinear(
        LIMITS.oauthForm,
        (n) => fill(n, unit),
        (body) => {
          try {
            parseForm(body);
          } catch (err) {
            ignore(err);
          }
        },
      );
      await assertLinear(LIMITS.bearerForm, (n) => fill(n, unit), formFields);
    }
  });

  test('multipart bodies read alone: parts, header lines, near-boundaries', async () => {
    for (const [unit, head, tail] of [
      ['--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n', '', '--XX--\r\n'],
      ['--XX\r\n', '', '\r\n'],
      ['\r\n--X', '--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\n', '\r\n--XX--\r\n'],
      ['X-A: b\r\n', '--XX\r\n', 'Content-Disposition: form-data; name="a"\r\n\r\n1\r\n--XX--\r\n'],
    ] as const) {
      await assertLinear(
        LIMITS.body,
        (n) => Buffer.from(fill(n, unit, head, tail)),
        (body) => readMultipart(body, 'XX'),
      );
    }
  });

  // The address is held to 254 characters before its pattern, which is quadratic in the length, runs.
  test('a portal sign-up address: dots and at-signs', async () => {
    for (const [unit, tail] of [
      ['a.', '@'],
      ['a.', ' x'],
      ['.@', ''],
    ]) {
      await assertLinear(
        LIMITS.oauthForm,
        (n) => fill(n, unit!, 'a@', tail),
        (email) => {
          try {
            normaliseEmail(email);
          } catch (err) {
            ignore(err);
          }
        },
        true,
      );
    }
  });
});
