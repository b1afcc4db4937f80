// ajv's errors → one message per mistake, in words a person can act on: what was found, what is
// allowed (the values, or an example) and the YAML path. "routes.hello.upstrem: unknown key; did
// you mean "upstream"?" rather than that and "missing required key", and "must be one of GET,
// HEAD, …" rather than one "must be equal to constant" per branch of a union.
import type { ErrorObject } from 'ajv';
import { Name } from '../fragments.ts';
import type { ConfigIssue, Segments } from './errors.ts';
import { formatPath, pointerSegments } from './yaml.ts';

interface SchemaNode {
  const?: unknown;
  enum?: unknown[];
  type?: string | string[];
  title?: string;
  examples?: unknown[];
  properties?: Record<string, unknown>;
  patternProperties?: Record<string, unknown>;
  maxProperties?: number;
  anyOf?: SchemaNode[];
}

export function schemaIssues(errors: readonly ErrorObject[], lineAt: (segments: Segments) => number | undefined): ConfigIssue[] {
  const kept = pickUnionBranch(collapseScalarUnions(errors));
  // A misspelled key explains the required key it was meant to be: one message, not two.
  const explained = new Set<string>();
  const issues: ConfigIssue[] = [];
  for (const e of kept) {
    const segments = pointerSegments(e.instancePath);
    let target = segments;
    let message: string;
    if (e.keyword === 'additionalProperties') {
      const key = (e.params as { additionalProperty: string }).additionalProperty;
      target = [...segments, key];
      const parent = (e.parentSchema ?? {}) as SchemaNode;
      const known = Object.keys(parent.properties ?? {});
      const guess = closest(key, known);
      if (guess !== undefined) explained.add(`${e.instancePath}|${guess}`);
      message = unknownKey(key, parent, known, guess);
    } else if (e.keyword === 'required') {
      const key = (e.params as { missingProperty: string }).missingProperty;
      if (explained.has(`${e.instancePath}|${key}`)) continue;
      message = `missing required key "${key}"`;
    } else {
      message = valueMessage(e, segments);
    }
    issues.push({ path: formatPath(target), message, line: lineAt(target) ?? lineAt(segments) });
  }
  // The explanation can come after the required key it explains: drop those too.
  return issues.filter((i) => {
    const m = /^missing required key "(.*)"$/.exec(i.message);
    return m === null || !explained.has(`${pointerOf(i.path)}|${m[1]}`);
  });
}

const pointerOf = (yamlPath: string) =>
  yamlPath === ''
    ? ''
    : `/${yamlPath
        .replace(/\[(\d+)\]/g, '.$1')
        .split('.')
        .join('/')}`;

function unknownKey(key: string, parent: SchemaNode, known: readonly string[], guess: string | undefined): string {
  // In a map of user-chosen names (routes, products, …) the key is a name, not a keyword.
  const names = Object.keys(parent.patternProperties ?? {})[0];
  if (names === Name.pattern) return `"${key}" is not a valid name: letters, digits, _ . and -, starting with a letter or digit, at most 64, such as ${Name.examples.join(' or ')}`;
  if (names !== undefined) return `"${key}" is not a valid name (must match /${names}/)`;
  if (guess !== undefined) return `unknown key; did you mean "${guess}"?`;
  // A one-of-these-names entry, such as a policy.
  return parent.maxProperties === 1 ? `unknown key (expected one of: ${known.join(', ')})` : 'unknown key';
}

function valueMessage(e: ErrorObject, segments: Segments): string {
  const schema = (e.parentSchema ?? {}) as SchemaNode;
  const params = e.params as Record<string, unknown>;
  let allowed: string;
  switch (e.keyword) {
    case 'type':
      allowed = `must be ${typeName(String(params.type))}`;
      break;
    case 'const':
      allowed = `must be ${shown(params.allowedValue)}`;
      break;
    case 'enum':
    case 'values':
      allowed = `must be one of ${(params.allowedValues as unknown[]).map(shown).join(', ')}`;
      break;
    case 'union':
      allowed = `must be ${params.described as string}`;
      break;
    case 'pattern':
      allowed = schema.examples === undefined ? `must match /${String(params.pattern)}/` : `must be ${article(schema.title ?? 'value')} such as ${schema.examples.map(shown).join(' or ')}`;
      break;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
    case 'minLength':
    case 'maxLength':
      allowed = e.message ?? 'is invalid';
      break;
    default:
      return e.message ?? 'is invalid';
  }
  // A secret is not echoed back into a log or a terminal.
  const last = segments.at(-1);
  if (typeof last === 'string' && /secret|pass/i.test(last)) return allowed;
  return `${allowed}, found ${found(e.data)}`;
}

const TYPE_NAMES: Record<string, string> = { object: 'a mapping', array: 'a list', integer: 'an integer', number: 'a number', string: 'a string', boolean: 'true or false', null: 'null' };

const typeName = (type: string) =>
  type
    .split(',')
    .map((t) => TYPE_NAMES[t] ?? t)
    .join(' or ');

const article = (noun: string) => `${/^[aeio]/i.test(noun) ? 'an' : 'a'} ${noun}`;

/** An allowed value as the YAML would have it. */
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function found(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value !== null && typeof value === 'object') return 'a mapping';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** What one branch of a union of scalars allows, in words: a value, or a type. */
function describeBranch(branch: SchemaNode): string | undefined {
  if ('const' in branch) return shown(branch.const);
  if (branch.title !== undefined && branch.examples !== undefined) return `${article(branch.title)} such as ${branch.examples.map(shown).join(' or ')}`;
  if (branch.enum !== undefined) return branch.enum.map(shown).join(', ');
  if (typeof branch.type === 'string' && branch.type !== 'object' && branch.type !== 'array') return typeName(branch.type);
  return undefined;
}

/**
 * A union whose branches are all constants (a method, a grant type) gets one message naming the
 * values; a union of scalars whose every branch refuses the value's type or value outright (a
 * string where "auto" or an integer goes) gets one naming what each branch allows.
 */
function collapseScalarUnions(errors: readonly ErrorObject[]): ErrorObject[] {
  let out = [...errors];
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    const branches = (union.schema ?? []) as SchemaNode[];
    const prefix = `${union.schemaPath}/`;
    const inside = (e: ErrorObject) => e.schemaPath.startsWith(prefix) && e.instancePath === union.instancePath;
    const insideAny = (e: ErrorObject) => e.schemaPath.startsWith(prefix);
    const described = branches.map(describeBranch);
    if (described.some((d) => d === undefined)) continue;
    const allConst = branches.every((b) => 'const' in b);
    const outright = out.filter(insideAny).every((e) => inside(e) && (e.keyword === 'type' || e.keyword === 'const' || e.keyword === 'enum'));
    if (!allConst && !outright) continue;
    const replacement: ErrorObject = allConst
      ? { ...union, keyword: 'values', params: { allowedValues: branches.map((b) => b.const) } }
      : { ...union, keyword: 'union', params: { described: described.join(' or ') } };
    out = out.filter((e) => e !== union && !insideAny(e));
    out.push(replacement);
  }
  return out;
}

// For a failed anyOf, report only the errors of the branch that came closest, outermost union
// first: "upstreams.a.mock.status: must be <= 599" rather than the errors of every branch.
function pickUnionBranch(errors: readonly ErrorObject[]): ErrorObject[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf').sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  let kept = errors.filter((e) => e.keyword !== 'anyOf');
  for (const union of unions) {
    const prefix = `${union.schemaPath}/`;
    const inside = (e: ErrorObject) => e.schemaPath.startsWith(prefix) && (e.instancePath === union.instancePath || e.instancePath.startsWith(`${union.instancePath}/`));
    const branches = new Map<string, ErrorObject[]>();
    for (const e of kept) {
      if (!inside(e)) continue;
      const branch = e.schemaPath.slice(prefix.length).split('/')[0]!;
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    // A branch whose type does not even match the value is the least likely intent.
    const score = (list: ErrorObject[]) => list.length + (list.some((e) => e.keyword === 'type' && e.instancePath === union.instancePath) ? 100 : 0);
    const best = [...branches.values()].sort((a, b) => score(a) - score(b))[0];
    if (best !== undefined) kept = kept.filter((e) => !inside(e) || best.includes(e));
  }
  return kept;
}

/** The known key a misspelled one was most likely meant to be: at most one edit for short keys, two for longer ones. */
export function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = candidate.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= (key.length < 5 ? 1 : 2) ? best : undefined;
}

/** Levenshtein distance, a swap of two neighbours counting as one edit. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
