// OpenAPI parameters read from a raw request: every row of the Style Examples table, then the edge cases.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileParameter, isIgnoredParameter, type ParameterLocation, type ParameterShape, type ParameterSpec, type RawRequest, type Read } from '../../src/openapi/parameters.ts';
import { parseQuery } from '../../src/openapi/query-parameters.ts';

/** A request as the tests write it: the query as its string, parsed as the validator parses it. */
type TestRequest = Partial<Omit<RawRequest, 'parsedQuery'>> & { query?: string };

function read(spec: ParameterSpec, request: TestRequest): Read {
  const { query = '', ...rest } = request;
  return compileParameter(spec)({ path: {}, headers: {}, ...rest, parsedQuery: parseQuery(query) });
}

const query = (spec: Omit<ParameterSpec, 'in'>, q: string): Read => read({ in: 'query', ...spec }, { query: q });
const path = (spec: Omit<ParameterSpec, 'in'>, value: string): Read => read({ in: 'path', ...spec }, { path: { [spec.name]: value } });
const header = (spec: Omit<ParameterSpec, 'in'>, headers: RawRequest['headers']): Read => read({ in: 'header', ...spec }, { headers });
const cookie = (spec: Omit<ParameterSpec, 'in'>, value: string | string[]): Read => read({ in: 'cookie', ...spec }, { headers: { cookie: value } });

// OAS 3.1.1 §4.8.12.4 "Style Examples" (Parameter Object), copied cell for cell; 3.0.3 has the same
// rows. The parameter is named color; its values are "blue", ["blue","black","brown"] and
// { "R": 100, "G": 200, "B": 150 } (read as strings: ajv coerces later). _empty_ is the empty string.
const NA = null;
const STYLE_EXAMPLES: readonly (readonly [style: string, explode: boolean, empty: string | null, string: string | null, array: string | null, object: string | null])[] = [
  ['matrix', false, ';color', ';color=blue', ';color=blue,black,brown', ';color=R,100,G,200,B,150'],
  ['matrix', true, ';color', ';color=blue', ';color=blue;color=black;color=brown', ';R=100;G=200;B=150'],
  ['label', false, '.', '.blue', '.blue,black,brown', '.R,100,G,200,B,150'],
  ['label', true, '.', '.blue', '.blue.black.brown', '.R=100.G=200.B=150'],
  ['simple', false, '', 'blue', 'blue,black,brown', 'R,100,G,200,B,150'],
  ['simple', true, '', 'blue', 'blue,black,brown', 'R=100,G=200,B=150'],
  ['form', false, '?color=', '?color=blue', '?color=blue,black,brown', '?color=R,100,G,200,B,150'],
  ['form', true, '?color=', '?color=blue', '?color=blue&color=black&color=brown', '?R=100&G=200&B=150'],
  ['spaceDelimited', false, NA, NA, '?color=blue%20black%20brown', '?color=R%20100%20G%20200%20B%20150'],
  ['spaceDelimited', true, NA, NA, NA, NA],
  ['pipeDelimited', false, NA, NA, '?color=blue%7Cblack%7Cbrown', '?color=R%7C100%7CG%7C200%7CB%7C150'],
  ['pipeDelimited', true, NA, NA, NA, NA],
  ['deepObject', false, NA, NA, NA, NA],
  ['deepObject', true, NA, NA, NA, '?color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150'],
];

const COLUMNS: readonly (readonly [column: 2 | 3 | 4 | 5, title: string, shape: ParameterShape, value: string | string[] | Record<string, string>])[] = [
  [2, 'empty', 'primitive', ''],
  [3, 'string', 'primitive', 'blue'],
  [4, 'array', 'array', ['blue', 'black', 'brown']],
  [5, 'object', 'object', { R: '100', G: '200', B: '150' }],
];

const QUERY_STYLES = new Set(['form', 'spaceDelimited', 'pipeDelimited', 'deepObject']);

describe('OAS 3.1.1 Style Examples', () => {
  for (const row of STYLE_EXAMPLES) {
    const [style, explode] = row;
    for (const [column, title, shape, value] of COLUMNS) {
      const serialized = row[column];
      const base = { name: 'color', style, explode, shape, properties: ['R', 'G', 'B'] };
      if (serialized === NA) {
        // n/a: the behaviour is undefined, so the document is refused when compiled.
        test(`${style} explode=${explode} ${title}: n/a, refused`, () => {
          assert.throws(() => compileParameter({ in: QUERY_STYLES.has(style) ? 'query' : 'path', ...base }), TypeError);
        });
        continue;
      }
      const locations: ParameterLocation[] = QUERY_STYLES.has(style) ? ['query'] : style === 'simple' ? ['path', 'header'] : ['path'];
      for (const location of locations) {
        test(`${style} explode=${explode} ${title} in ${location}: ${JSON.stringify(serialized)}`, () => {
          const request: TestRequest = location === 'query' ? { query: serialized.slice(1) } : location === 'header' ? { headers: { color: serialized } } : { path: { color: serialized } };
          assert.deepStrictEqual(read({ in: location, ...base }, request), { value });
        });
      }
    }
  }
});

describe('defaults per location', () => {
  const cases: readonly (readonly [name: string, spec: ParameterSpec, request: TestRequest, expected: Read])[] = [
    ['path is simple', { name: 'id', in: 'path', shape: 'array' }, { path: { id: 'a,b' } }, { value: ['a', 'b'] }],
    ['query is form, exploded', { name: 'id', in: 'query', shape: 'array' }, { query: 'id=a,b&id=c' }, { value: ['a,b', 'c'] }],
    ['query form object defaults to explode', { name: 'p', in: 'query', shape: 'object', properties: ['x', 'y'] }, { query: 'x=1&y=2&z=3' }, { value: { x: '1', y: '2' } }],
    ['header is simple', { name: 'X-Ids', in: 'header', shape: 'array' }, { headers: { 'x-ids': 'a,b' } }, { value: ['a', 'b'] }],
    ['cookie is form', { name: 'id', in: 'cookie', shape: 'primitive' }, { headers: { cookie: 'id=a+b' } }, { value: 'a+b' }],
  ];
  for (const [name, spec, request, expected] of cases) test(name, () => assert.deepStrictEqual(read(spec, request), expected));
});

describe('absent parameters', () => {
  const cases: readonly (readonly [name: string, spec: ParameterSpec, request: TestRequest])[] = [
    ['path', { name: 'id', in: 'path', shape: 'primitive' }, { path: { other: 'x' } }],
    ['path, not an inherited property', { name: 'toString', in: 'path', shape: 'primitive' }, {}],
    ['query primitive', { name: 'q', in: 'query', shape: 'primitive' }, { query: 'qq=1&Q=2' }],
    ['query exploded array', { name: 'q', in: 'query', shape: 'array' }, { query: '' }],
    ['query exploded object, no property given', { name: 'q', in: 'query', shape: 'object', properties: ['a'] }, { query: 'b=1' }],
    ['deepObject', { name: 'q', in: 'query', style: 'deepObject', explode: true, shape: 'object' }, { query: 'qq[a]=1&r[a]=2' }],
    ['header', { name: 'X-A', in: 'header', shape: 'primitive' }, { headers: { 'x-b': '1' } }],
    ['cookie, no Cookie header', { name: 'a', in: 'cookie', shape: 'primitive' }, { headers: {} }],
    ['cookie, not in the Cookie header', { name: 'a', in: 'cookie', shape: 'primitive' }, { headers: { cookie: 'ab=1; b=2' } }],
  ];
  for (const [name, spec, request] of cases) test(name, () => assert.deepStrictEqual(read(spec, request), { absent: true }));
});

describe('percent-decoding', () => {
  const prim = { name: 'color', shape: 'primitive' } as const;
  const arr = { name: 'color', shape: 'array' } as const;
  const obj = { name: 'color', shape: 'object' } as const;
  test('simple path: an encoded , is data, decoded after splitting', () => {
    assert.deepStrictEqual(path(arr, 'a%2Cb,c'), { value: ['a,b', 'c'] });
  });
  test('simple path object: an encoded , in a value', () => {
    assert.deepStrictEqual(path(obj, 'R,1%2C2'), { value: { R: '1,2' } });
  });
  test('simple path explode object: an encoded = is data', () => {
    assert.deepStrictEqual(path({ ...obj, explode: true }, 'R%3DX=1%3D2'), { value: { 'R=X': '1=2' } });
  });
  test('path: + is itself', () => {
    assert.deepStrictEqual(path(prim, 'a+b%20c'), { value: 'a+b c' });
  });
  test('label explode: an encoded . is data', () => {
    assert.deepStrictEqual(path({ ...arr, style: 'label', explode: true }, '.a%2Eb.c'), { value: ['a.b', 'c'] });
  });
  test('matrix explode: an encoded ; is data', () => {
    assert.deepStrictEqual(path({ ...arr, style: 'matrix', explode: true }, ';color=a%3Bb;color=c'), { value: ['a;b', 'c'] });
  });
  test('matrix: a percent-encoded name matches', () => {
    assert.deepStrictEqual(path({ ...prim, style: 'matrix' }, ';col%6Fr=blue'), { value: 'blue' });
  });
  test('form explode=false: an encoded , is data', () => {
    assert.deepStrictEqual(query({ ...arr, explode: false }, 'color=a%2Cb,c'), { value: ['a,b', 'c'] });
  });
  test('form: an encoded & and = are data', () => {
    assert.deepStrictEqual(query(prim, 'color=a%26b%3Dc&x=1'), { value: 'a&b=c' });
  });
  test('query: + is a space, %2B is a +', () => {
    assert.deepStrictEqual(query(prim, 'color=light+blue%2B'), { value: 'light blue+' });
  });
  test('query: names are matched after decoding (%-encoded and +)', () => {
    assert.deepStrictEqual(query({ name: 'my color', shape: 'primitive' }, 'my%20color=x'), { value: 'x' });
    assert.deepStrictEqual(query({ name: 'my color', shape: 'primitive' }, 'my+color=y'), { value: 'y' });
  });
  test('query: non-ASCII UTF-8', () => {
    assert.deepStrictEqual(query(prim, 'color=%C3%A9t%C3%A9'), { value: 'été' });
  });
  test('spaceDelimited: + and %20 both delimit (Appendix E: one decoding pass)', () => {
    assert.deepStrictEqual(query({ ...arr, style: 'spaceDelimited' }, 'color=a+b%20c'), { value: ['a', 'b', 'c'] });
  });
  test('pipeDelimited: a raw | delimits as %7C does', () => {
    assert.deepStrictEqual(query({ ...arr, style: 'pipeDelimited' }, 'color=a|b%7Cc%2Cd'), { value: ['a', 'b', 'c,d'] });
  });
  test('deepObject: unencoded brackets, encoded values', () => {
    assert.deepStrictEqual(query({ ...obj, style: 'deepObject', explode: true }, 'color[R]=1%2C2&color[G]=a+b'), { value: { R: '1,2', G: 'a b' } });
  });
  // Checked as sent, since the upstream reads them as sent: an enum of t1, t2 must not pass 't%31'.
  test('header: a percent-escape is refused, not decoded', () => {
    assert.deepStrictEqual(header({ name: 'X-Tags', shape: 'array' }, { 'x-tags': 'a,c d' }), { value: ['a', 'c d'] });
    assert.deepStrictEqual(header({ name: 'X-Tag', shape: 'primitive' }, { 'x-tag': 't%31' }), {
      error: "header parameter X-Tag must not hold a '%': it reaches the upstream as sent, and upstreams differ on decoding it",
    });
  });
  test('cookie: + is itself, a percent-escape is refused', () => {
    assert.deepStrictEqual(cookie({ ...arr, explode: false }, 'color=a,c+d'), { value: ['a', 'c+d'] });
    assert.deepStrictEqual(cookie(prim, 'color=t%31'), { error: "cookie parameter color must not hold a '%': it reaches the upstream as sent, and upstreams differ on decoding it" });
  });
  test('cookie: a name spelled with an escape beside the plain one is refused (PHP decodes cookie names)', () => {
    assert.deepStrictEqual(cookie(prim, 'c%6Flor=red; color=blue'), { error: "cookie parameter color is spelled otherwise (a percent-escape, '+' or '.'), as PHP reads its name" });
    assert.deepStrictEqual(cookie(prim, 'other%20name=1; color=blue'), { value: 'blue' });
    // PHP makes '.' and ' ' (or '+') in a cookie's name '_'.
    const snake = { name: 'my_color', shape: 'primitive' } as const;
    for (const spelled of ['my.color', 'my+color', 'my%20color', 'my%2Ecolor']) {
      assert.deepStrictEqual(
        cookie(snake, `${spelled}=red; my_color=blue`),
        { error: "cookie parameter my_color is spelled otherwise (a percent-escape, '+' or '.'), as PHP reads its name" },
        spelled,
      );
    }
    assert.deepStrictEqual(cookie(snake, 'my.colour=red; my_color=blue'), { value: 'blue' });
    // PHP before 8.1.11 decoded cookie names, then dropped leading spaces and cut a name at a NUL or '[' (an array).
    for (const spelled of ['+color', '%20color', 'color%00', 'color%5B%5D', 'color%5Bx']) {
      assert.deepStrictEqual(cookie(prim, `${spelled}=red; color=blue`), { error: "cookie parameter color is spelled otherwise (a percent-escape, '+' or '.'), as PHP reads its name" }, spelled);
    }
    assert.deepStrictEqual(cookie(prim, 'colors%5B%5D=red; color=blue'), { value: 'blue' });
  });

  const malformed: readonly (readonly [name: string, run: () => Read, error: string])[] = [
    ['path simple', () => path(prim, 'a%zz'), 'path parameter color has a malformed percent-encoding'],
    ['path array item', () => path(arr, 'a,%'), 'path parameter color has a malformed percent-encoding'],
    ['path invalid UTF-8', () => path(prim, '%FF'), 'path parameter color has a malformed percent-encoding'],
    ['label object', () => path({ ...obj, style: 'label', explode: true }, '.R=%4'), 'path parameter color has a malformed percent-encoding'],
    ['matrix name', () => path({ ...prim, style: 'matrix' }, ';col%r=blue'), 'path parameter color has a malformed percent-encoding'],
    ['query value', () => query(prim, 'color=%E2%82'), 'query parameter color has a malformed percent-encoding'],
    ['query exploded array', () => query(arr, 'color=a&color=%'), 'query parameter color has a malformed percent-encoding'],
    ['query name, anywhere in the query string', () => query(prim, 'color=blue&x%y=1'), 'the query string has a malformed percent-encoding'],
    ['pipeDelimited', () => query({ ...arr, style: 'pipeDelimited' }, 'color=a%7'), 'query parameter color has a malformed percent-encoding'],
    ['deepObject value', () => query({ ...obj, style: 'deepObject', explode: true }, 'color[R]=%G0'), 'query parameter color has a malformed percent-encoding'],
    ['header', () => header({ name: 'X-A', shape: 'primitive' }, { 'x-a': '50%' }), "header parameter X-A must not hold a '%': it reaches the upstream as sent, and upstreams differ on decoding it"],
    ['cookie', () => cookie(prim, 'color=%%'), "cookie parameter color must not hold a '%': it reaches the upstream as sent, and upstreams differ on decoding it"],
  ];
  for (const [name, run, error] of malformed) test(`malformed: ${name} is an error, not a throw`, () => assert.deepStrictEqual(run(), { error }));
});

describe('repeated query parameters', () => {
  const cases: readonly (readonly [name: string, spec: Omit<ParameterSpec, 'in'>, q: string, expected: Read])[] = [
    ['form explode array: repeats make the array, in order', { name: 'color', shape: 'array' }, 'color=blue&x=1&color=black', { value: ['blue', 'black'] }],
    ['form explode array: one occurrence', { name: 'color', shape: 'array' }, 'color=blue', { value: ['blue'] }],
    ['primitive given twice', { name: 'color', shape: 'primitive' }, 'color=blue&color=black', { error: 'query parameter color is given more than once' }],
    ['primitive given twice, same value', { name: 'color', shape: 'primitive' }, 'color=blue&color=blue', { error: 'query parameter color is given more than once' }],
    ['primitive given twice, once encoded', { name: 'color', shape: 'primitive' }, 'color=blue&c%6Flor=black', { error: 'query parameter color is given more than once' }],
    ['form explode=false array given twice', { name: 'color', shape: 'array', explode: false }, 'color=a,b&color=c', { error: 'query parameter color is given more than once' }],
    ['form explode=false object given twice', { name: 'color', shape: 'object', explode: false }, 'color=R,1&color=G,2', { error: 'query parameter color is given more than once' }],
    ['spaceDelimited given twice', { name: 'color', shape: 'array', style: 'spaceDelimited' }, 'color=a&color=b', { error: 'query parameter color is given more than once' }],
    ['form explode object: a property twice', { name: 'color', shape: 'object', properties: ['R'] }, 'R=1&R=2', { error: 'query parameter color: property R is given more than once' }],
    ['deepObject: a key twice', { name: 'color', shape: 'object', style: 'deepObject' }, 'color[R]=1&color%5BR%5D=2', { error: 'query parameter color: property R is given more than once' }],
    ['form object: a key twice in the list', { name: 'color', shape: 'object', explode: false }, 'color=R,1,R,2', { error: 'query parameter color has a property given more than once' }],
  ];
  for (const [name, spec, q, expected] of cases) test(name, () => assert.deepStrictEqual(query(spec, q), expected));
});

describe('query string parsing', () => {
  test('empty pieces are skipped; a name without = has the empty value', () => {
    assert.deepStrictEqual(query({ name: 'a', shape: 'primitive' }, '&&a&b=1&'), { value: '' });
  });
  test('only the first = splits name from value', () => {
    assert.deepStrictEqual(query({ name: 'a', shape: 'primitive' }, 'a=x=y'), { value: 'x=y' });
  });
  test('parseQuery: names decoded, values left encoded, repeats in order', () => {
    const parsed = parseQuery('a%5B1%5D=x%20y&b+c=1&a%5B1%5D=+&d');
    assert.deepStrictEqual(
      [...parsed.params],
      [
        ['a[1]', ['x%20y', '+']],
        ['b c', ['1']],
        ['d', ['']],
      ],
    );
    assert.equal(parsed.error, undefined);
  });
  test('parseQuery: a malformed name', () => {
    assert.deepStrictEqual(parseQuery('a=1&%=2'), { params: new Map(), error: 'the query string has a malformed percent-encoding' });
  });
  test('every reader reads the one parse of the request', () => {
    const reader = compileParameter({ name: 'a', in: 'query', shape: 'primitive' });
    assert.deepStrictEqual(reader({ path: {}, headers: {}, parsedQuery: parseQuery('a=2') }), { value: '2' });
  });
});

describe('form explode objects', () => {
  test('only the declared properties that are given', () => {
    assert.deepStrictEqual(query({ name: 'color', shape: 'object', properties: ['R', 'G', 'B'] }, 'R=100&B=150&color=x&A=1'), { value: { R: '100', B: '150' } });
  });
  test('free-form: every name but the other parameters', () => {
    assert.deepStrictEqual(query({ name: 'freeForm', shape: 'object', otherQueryNames: ['limit'] }, 'limit=1&x=2&y+z=3'), { value: { x: '2', 'y z': '3' } });
  });
  test('__proto__ is an own property, nothing is polluted', () => {
    const result = query({ name: 'p', shape: 'object' }, '__proto__=x&constructor=y');
    assert.ok('value' in result);
    assert.deepStrictEqual(Object.keys(result.value), ['__proto__', 'constructor']);
    assert.equal(Object.getPrototypeOf(result.value), Object.prototype);
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });
});

describe('deepObject', () => {
  const spec = { name: 'color', shape: 'object', style: 'deepObject', explode: true } as const;
  const cases: readonly (readonly [name: string, q: string, expected: Read])[] = [
    ['explode absent (its default, false) reads the one defined form', 'color[R]=1', { value: { R: '1' } }],
    ['other parameters are ignored', 'colors[R]=1&color[G]=2&x=3', { value: { G: '2' } }],
    ['an empty key and an empty value', 'color[]=&color[B]', { value: { '': '', B: '' } }],
    ['nested brackets', 'color[R][x]=1', { error: 'query parameter color is nested more than one level deep' }],
    ['nested, encoded', 'color%5BR%5D%5Bx%5D=1', { error: 'query parameter color is nested more than one level deep' }],
    ['a bracket inside the key', 'color[R[x]=1', { error: 'query parameter color is nested more than one level deep' }],
    ['text after the bracket', 'color[R]x=1', { error: 'query parameter color is nested more than one level deep' }],
    ['no closing bracket', 'color[R=1', { error: "query parameter color has a '[' without ']'" }],
    ['the bare name', 'color=1', { error: 'query parameter color must be given as color[property]=value' }],
  ];
  for (const [name, q, expected] of cases) {
    test(name, () => assert.deepStrictEqual(query(name.startsWith('explode absent') ? { name: 'color', shape: 'object', style: 'deepObject' } : spec, q), expected));
  }
});

describe('path styles', () => {
  const cases: readonly (readonly [name: string, spec: Omit<ParameterSpec, 'in'>, value: string, expected: Read])[] = [
    ['label without its .', { name: 'color', style: 'label', shape: 'primitive' }, 'blue', { error: "path parameter color must begin with '.'" }],
    ['label primitive keeps later dots', { name: 'color', style: 'label', shape: 'primitive' }, '.a.b', { value: 'a.b' }],
    ['label array, empty', { name: 'color', style: 'label', shape: 'array' }, '.', { value: [] }],
    ['label object explode without =', { name: 'color', style: 'label', explode: true, shape: 'object' }, '.R.G=1', { error: "path parameter color has a property without '='" }],
    ['matrix without its ;', { name: 'color', style: 'matrix', shape: 'primitive' }, 'color=blue', { error: "path parameter color must begin with ';'" }],
    ['matrix with another name', { name: 'color', style: 'matrix', shape: 'primitive' }, ';colour=blue', { error: "path parameter color has an unexpected ';' segment" }],
    ['matrix with an extra segment', { name: 'color', style: 'matrix', shape: 'primitive' }, ';color=blue;x=1', { error: "path parameter color has an unexpected ';' segment" }],
    ['matrix primitive twice', { name: 'color', style: 'matrix', shape: 'primitive' }, ';color=blue;color=red', { error: 'path parameter color is given more than once' }],
    ['matrix explode=false array twice', { name: 'color', style: 'matrix', shape: 'array' }, ';color=a,b;color=c', { error: 'path parameter color is given more than once' }],
    ['matrix explode array, an empty item', { name: 'color', style: 'matrix', explode: true, shape: 'array' }, ';color;color=b', { value: ['', 'b'] }],
    ['matrix explode object, a bare key is empty', { name: 'color', style: 'matrix', explode: true, shape: 'object' }, ';R;G=2', { value: { R: '', G: '2' } }],
    ['matrix explode object, empty', { name: 'color', style: 'matrix', explode: true, shape: 'object' }, ';', { value: {} }],
    ['matrix array, empty', { name: 'color', style: 'matrix', shape: 'array' }, ';color=', { value: [] }],
    ['simple array, empty', { name: 'color', shape: 'array' }, '', { value: [] }],
    ['simple object, empty', { name: 'color', shape: 'object' }, '', { value: {} }],
    ['simple array keeps empty items', { name: 'color', shape: 'array' }, 'a,,b', { value: ['a', '', 'b'] }],
    ['simple explode object without =', { name: 'color', explode: true, shape: 'object' }, 'R=1,G', { error: "path parameter color has a property without '='" }],
  ];
  for (const [name, spec, value, expected] of cases) test(name, () => assert.deepStrictEqual(path(spec, value), expected));
});

describe('objects as key,value lists', () => {
  const odd = (where: string): Read => ({ error: `${where} color has a key without a value` });
  const cases: readonly (readonly [name: string, run: () => Read, expected: Read])[] = [
    ['simple path', () => path({ name: 'color', shape: 'object' }, 'R,100,G'), odd('path parameter')],
    ['label', () => path({ name: 'color', style: 'label', shape: 'object' }, '.R'), odd('path parameter')],
    ['matrix', () => path({ name: 'color', style: 'matrix', shape: 'object' }, ';color=R,1,G'), odd('path parameter')],
    ['form', () => query({ name: 'color', explode: false, shape: 'object' }, 'color=R'), odd('query parameter')],
    ['spaceDelimited', () => query({ name: 'color', style: 'spaceDelimited', shape: 'object' }, 'color=R%20100%20G'), odd('query parameter')],
    ['pipeDelimited', () => query({ name: 'color', style: 'pipeDelimited', shape: 'object' }, 'color=R|1|G'), odd('query parameter')],
    ['header', () => header({ name: 'color', shape: 'object' }, { color: 'R,1,G' }), odd('header parameter')],
    ['cookie', () => cookie({ name: 'color', explode: false, shape: 'object' }, 'color=R,1,G'), odd('cookie parameter')],
  ];
  for (const [name, run, expected] of cases) test(`odd count: ${name}`, () => assert.deepStrictEqual(run(), expected));
});

describe('empty values (the table\'s "empty" column is the empty string)', () => {
  const cases: readonly (readonly [name: string, run: () => Read, expected: Read])[] = [
    ['form primitive ?color=', () => query({ name: 'color', shape: 'primitive' }, 'color='), { value: '' }],
    ['form explode=false array ?color= is []', () => query({ name: 'color', explode: false, shape: 'array' }, 'color='), { value: [] }],
    ['form explode=true array ?color= is [""]', () => query({ name: 'color', shape: 'array' }, 'color='), { value: [''] }],
    ['form explode=false object ?color= is {}', () => query({ name: 'color', explode: false, shape: 'object' }, 'color='), { value: {} }],
    ['form explode object, a property empty', () => query({ name: 'color', shape: 'object', properties: ['R'] }, 'R='), { value: { R: '' } }],
    ['spaceDelimited ?color= is []', () => query({ name: 'color', style: 'spaceDelimited', shape: 'array' }, 'color='), { value: [] }],
    ['pipeDelimited ?color= is {}', () => query({ name: 'color', style: 'pipeDelimited', shape: 'object' }, 'color='), { value: {} }],
    ['header primitive, only whitespace', () => header({ name: 'color', shape: 'primitive' }, { color: '  ' }), { value: '' }],
    ['header array, empty', () => header({ name: 'color', shape: 'array' }, { color: '' }), { value: [] }],
    ['cookie primitive, empty', () => cookie({ name: 'color', shape: 'primitive' }, 'color='), { value: '' }],
    ['cookie array, empty', () => cookie({ name: 'color', explode: false, shape: 'array' }, 'color='), { value: [] }],
  ];
  for (const [name, run, expected] of cases) test(name, () => assert.deepStrictEqual(run(), expected));
});

describe('headers', () => {
  test('names are case-insensitive: the spec name is lower-cased for the lookup', () => {
    assert.deepStrictEqual(header({ name: 'X-Request-Color', shape: 'primitive' }, { 'x-request-color': 'blue' }), { value: 'blue' });
  });
  test('optional whitespace is trimmed, spaces and tabs only', () => {
    assert.deepStrictEqual(header({ name: 'color', shape: 'primitive' }, { color: ' \tblue \t' }), { value: 'blue' });
    assert.deepStrictEqual(header({ name: 'color', shape: 'primitive' }, { color: '\u00a0blue' }), { value: '\u00a0blue' });
  });
  test('array items lose the whitespace Node puts between repeated headers', () => {
    assert.deepStrictEqual(header({ name: 'color', shape: 'array' }, { color: 'blue, black,  brown' }), { value: ['blue', 'black', 'brown'] });
  });
  test('array from repeated headers given as string[]', () => {
    assert.deepStrictEqual(header({ name: 'color', shape: 'array' }, { color: ['blue,black', 'brown'] }), { value: ['blue', 'black', 'brown'] });
  });
  test('a primitive from repeated headers given as string[] is an error', () => {
    assert.deepStrictEqual(header({ name: 'color', shape: 'primitive' }, { color: ['blue', 'black'] }), { error: 'header parameter color is given more than once' });
  });
  test('objects, explode false and true, with whitespace', () => {
    assert.deepStrictEqual(header({ name: 'color', shape: 'object' }, { color: 'R, 100, G, 200' }), { value: { R: '100', G: '200' } });
    assert.deepStrictEqual(header({ name: 'color', explode: true, shape: 'object' }, { color: 'R=100, G=200' }), { value: { R: '100', G: '200' } });
  });
  test('Accept, Content-Type and Authorization are to be ignored (the caller asks isIgnoredParameter)', () => {
    assert.equal(isIgnoredParameter({ name: 'Authorization', in: 'header' }), true);
    assert.equal(isIgnoredParameter({ name: 'content-type', in: 'header' }), true);
    assert.equal(isIgnoredParameter({ name: 'Accept', in: 'header' }), true);
    assert.equal(isIgnoredParameter({ name: 'Accept', in: 'query' }), false);
    assert.equal(isIgnoredParameter({ name: 'X-Accept', in: 'header' }), false);
  });
});

describe('cookies', () => {
  const cases: readonly (readonly [name: string, spec: Omit<ParameterSpec, 'in'>, value: string | string[], expected: Read])[] = [
    ['among others, with and without spaces', { name: 'b', shape: 'primitive' }, 'a=1;b=2; c=3', { value: '2' }],
    ['the first and last pair', { name: 'a', shape: 'primitive' }, 'a=1; b=2', { value: '1' }],
    ['names are case-sensitive', { name: 'Color', shape: 'primitive' }, 'color=1', { absent: true }],
    ['only the first = splits', { name: 'a', shape: 'primitive' }, 'a=x=y', { value: 'x=y' }],
    // Go reads `junk` as a cookie of that name; others skip it.
    [
      'a pair without = is refused',
      { name: 'a', shape: 'primitive' },
      'junk; a=1',
      { error: 'cookie parameter a: the Cookie header has a pair that is not name=value as RFC 6265 writes them (a space, a control or a non-ASCII character), which parsers split differently' },
    ],
    ['explode=false array', { name: 'color', explode: false, shape: 'array' }, 'color=blue,black,brown', { value: ['blue', 'black', 'brown'] }],
    ['explode=false object', { name: 'color', explode: false, shape: 'object' }, 'color=R,100,G,200,B,150', { value: { R: '100', G: '200', B: '150' } }],
    ['repeated is an error', { name: 'a', shape: 'primitive' }, 'a=1; b=2; a=1', { error: 'cookie parameter a is given more than once' }],
    ['Cookie header as string[] is joined', { name: 'a', shape: 'primitive' }, ['b=2', 'a=1'], { value: '1' }],
    ['repeated across string[] is an error', { name: 'a', shape: 'primitive' }, ['a=2', 'a=1'], { error: 'cookie parameter a is given more than once' }],
  ];
  for (const [name, spec, value, expected] of cases) test(name, () => assert.deepStrictEqual(cookie(spec, value), expected));
});

describe('refused when compiled', () => {
  const cases: readonly (readonly [spec: ParameterSpec, message: string])[] = [
    [{ name: 'c', in: 'header', style: 'deepObject', shape: 'object' }, 'header parameter c: style deepObject is only for query parameters'],
    [{ name: 'c', in: 'path', style: 'deepObject', shape: 'object' }, 'path parameter c: style deepObject is only for query parameters'],
    [{ name: 'c', in: 'query', style: 'deepObject', shape: 'array' }, 'query parameter c: style deepObject is only for object values, not array'],
    [{ name: 'c', in: 'query', style: 'deepObject', explode: false, shape: 'object' }, 'query parameter c: style deepObject with explode false is undefined'],
    [{ name: 'c', in: 'query', style: 'matrix', shape: 'primitive' }, 'query parameter c: style matrix is only for path parameters'],
    [{ name: 'c', in: 'header', style: 'label', shape: 'primitive' }, 'header parameter c: style label is only for path parameters'],
    [{ name: 'c', in: 'query', style: 'simple', shape: 'array' }, 'query parameter c: style simple is only for path and header parameters'],
    [{ name: 'c', in: 'cookie', style: 'simple', shape: 'primitive' }, 'cookie parameter c: style simple is only for path and header parameters'],
    [{ name: 'c', in: 'path', style: 'form', shape: 'primitive' }, 'path parameter c: style form is only for query and cookie parameters'],
    [{ name: 'c', in: 'header', style: 'form', shape: 'primitive' }, 'header parameter c: style form is only for query and cookie parameters'],
    [{ name: 'c', in: 'header', style: 'spaceDelimited', shape: 'array' }, 'header parameter c: style spaceDelimited is only for query parameters'],
    [{ name: 'c', in: 'cookie', style: 'pipeDelimited', shape: 'array' }, 'cookie parameter c: style pipeDelimited is only for query parameters'],
    [{ name: 'c', in: 'query', style: 'spaceDelimited', shape: 'primitive' }, 'query parameter c: style spaceDelimited is only for array and object values, not primitive'],
    [{ name: 'c', in: 'query', style: 'pipeDelimited', explode: true, shape: 'array' }, 'query parameter c: style pipeDelimited with explode true is undefined'],
    [{ name: 'c', in: 'cookie', shape: 'array' }, 'cookie parameter c: a cookie cannot carry an exploded array; set explode to false'],
    [{ name: 'c', in: 'cookie', explode: true, shape: 'object' }, 'cookie parameter c: a cookie cannot carry an exploded object; set explode to false'],
    [{ name: 'c', in: 'query', style: 'Form', shape: 'primitive' }, 'query parameter c: unknown style Form'],
    [{ name: 'c', in: 'query', style: 'toString', shape: 'primitive' }, 'query parameter c: unknown style toString'],
    [{ name: 'c', in: 'body' as ParameterLocation, shape: 'primitive' }, 'parameter c: in must be path, query, header or cookie'],
    [{ name: '', in: 'query', shape: 'primitive' }, 'a parameter needs a non-empty name'],
  ];
  for (const [spec, message] of cases) {
    test(message, () => assert.throws(() => compileParameter(spec), { name: 'TypeError', message }));
  }
});
