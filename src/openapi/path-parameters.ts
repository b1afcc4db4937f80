// Path parameters by style (simple, label, matrix), read from the segment the route template
// matched, still percent-encoded. RFC 6570 styles leave their delimiters (, ; . =) unencoded and
// encode them inside values, so a value is split first and each piece decoded after: '%2C' is
// data, ',' a delimiter. '+' in a path is itself.
import { percentDecode } from '../http/query.ts';
import { ABSENT, decoded, decodedAll, keyValueList, list, malformed, own, pairList, pairs, simpleValue, type Compiled, type Reader } from './parameter-values.ts';

/** simple: 'blue', 'blue,black,brown', 'R,100,G,200' or (explode) 'R=100,G=200'. */
export function simplePathReader(p: Compiled): Reader {
  return function readSimplePath(request) {
    const raw = own(request.path, p.name);
    return raw === undefined ? ABSENT : simpleValue(p, raw, false);
  };
}

/** label: '.blue'; arrays '.blue,black,brown' or (explode) '.blue.black.brown'; objects '.R,100,G,200' or (explode) '.R=100.G=200'. */
export function labelReader(p: Compiled): Reader {
  const separator = p.explode ? '.' : ',';
  return function readLabel(request) {
    const raw = own(request.path, p.name);
    if (raw === undefined) return ABSENT;
    if (raw[0] !== '.') return { error: `${p.where} must begin with '.'` };
    const body = raw.slice(1);
    if (p.shape === 'primitive') return decoded(p, body, false);
    if (p.shape === 'array') return list(p, body, separator, false);
    return p.explode ? pairList(p, body, separator, false) : keyValueList(p, body, ',', false);
  };
}

/** matrix: ';color=blue'; arrays ';color=blue,black' or (explode) ';color=blue;color=black'; objects ';color=R,100,G,200' or (explode) ';R=100;G=200'. */
export function matrixReader(p: Compiled): Reader {
  return function readMatrix(request) {
    const raw = own(request.path, p.name);
    if (raw === undefined) return ABSENT;
    if (raw[0] !== ';') return { error: `${p.where} must begin with ';'` };
    const segments = raw.slice(1).split(';');
    // RFC 6570 §3.2.7: ';name' without '=' is the empty value.
    if (p.shape === 'object' && p.explode) return pairs(p, raw === ';' ? [] : segments, false, true);
    const values: string[] = [];
    for (const segment of segments) {
      const eq = segment.indexOf('=');
      const name = percentDecode(eq === -1 ? segment : segment.slice(0, eq), false);
      if (name === undefined) return malformed(p);
      if (name !== p.name) return { error: `${p.where} has an unexpected ';' segment` };
      values.push(eq === -1 ? '' : segment.slice(eq + 1));
    }
    if (p.shape === 'array' && p.explode) return decodedAll(p, values, false);
    if (values.length !== 1) return { error: `${p.where} is given more than once` };
    const value = values[0] as string;
    if (p.shape === 'primitive') return decoded(p, value, false);
    return p.shape === 'array' ? list(p, value, ',', false) : keyValueList(p, value, ',', false);
  };
}
