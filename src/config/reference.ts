// docs/configuration.md, written from the schema (`npm run docs:config`): every option with its
// path, type, allowed values, default and description. test/config/reference.test.ts fails when
// the committed page differs from what the schema says now.
import { policySchema } from '../policies/index.ts';
import { configSchema } from './schema.ts';

interface Node {
  description?: string;
  default?: unknown;
  const?: unknown;
  enum?: unknown[];
  type?: string;
  title?: string;
  examples?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Node>;
  patternProperties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  anyOf?: Node[];
}

interface Row {
  path: string;
  type: string;
  default: string;
  description: string;
}

export function configReference(): string {
  const root = configSchema as unknown as Node;
  const policies = policySchema as unknown as Node;
  const out = [
    '# Configuration reference',
    '',
    '<!-- Generated from src/config/schema.ts by `npm run docs:config`; do not edit by hand. -->',
    '',
    "The gateway reads one YAML file (`gateway --config gateway.yaml`). Every value accepts `${VAR}` and `${VAR:-default}`; `$${` is a literal `${`. Relative paths are resolved against the file's folder. `gateway config check` validates a file; `gateway config schema` prints the JSON Schema for editors (`gateway.schema.json`). `<name>` stands for a name you choose: letters, digits, `_`, `.` and `-`, starting with a letter or digit, up to 64 characters. A duration is seconds as an integer, or a number with a unit: `500ms`, `30s`, `5m`, `1h`, `1d`.",
    '',
  ];
  for (const [key, node] of Object.entries(root.properties ?? {})) {
    const own = row(key, node, (root.required ?? []).includes(key));
    out.push(`## \`${key}\``, '', own.description, '', `Type: ${own.type}${own.default === '' ? '' : own.default === 'required' ? '; required' : `; default ${own.default}`}.`, '');
    out.push(...table(options(node, key, policies)), '');
  }
  out.push('## Policies', '', 'Each entry of a `policies` list is a mapping with one key, the policy, whose value holds its options.', '');
  for (const [name, node] of Object.entries(policies.properties ?? {})) {
    out.push(`### \`${name}\``, '', node.description ?? '', '');
    out.push(...table(options(node, name, policies)), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** The options below `node`, depth first; a list of policies stops at the list. */
function options(node: Node, at: string, policies: Node): Row[] {
  if (node === policies) return [];
  const rows: Row[] = [];
  const seen = new Set<string>();
  const branches = node.anyOf ?? [node];
  for (const branch of branches) {
    for (const [key, child] of Object.entries(branch.properties ?? {})) {
      const path = `${at}.${key}`;
      if (seen.has(path)) continue;
      seen.add(path);
      rows.push(row(path, child, (branch.required ?? []).includes(key)), ...options(child, path, policies));
    }
    for (const child of Object.values(branch.patternProperties ?? {})) rows.push(...options(child, `${at}.<name>`, policies));
    if (branch.items !== undefined && branch.items !== policies) rows.push(...options(branch.items, `${at}[]`, policies));
  }
  return rows;
}

function row(path: string, node: Node, required: boolean): Row {
  return {
    path,
    type: typeOf(node),
    default: required ? 'required' : node.default === undefined ? '' : `\`${typeof node.default === 'string' ? node.default : JSON.stringify(node.default)}\``,
    description: node.description ?? '',
  };
}

function typeOf(node: Node): string {
  if (node === (policySchema as unknown as Node)) return '[policy](#policies)';
  if ('const' in node) return `\`${JSON.stringify(node.const)}\``;
  if (node.enum !== undefined) return `one of ${node.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  if (node.anyOf !== undefined) {
    // Seconds, or a number with a unit: the page's introduction says so once.
    if (node.anyOf.some((b) => b.title === 'duration')) return 'duration';
    if (node.anyOf.every((b) => 'const' in b)) return `one of ${node.anyOf.map((b) => `\`${String(b.const)}\``).join(', ')}`;
    return node.anyOf.map(typeOf).join(' or ');
  }
  const range = node.maximum === undefined ? (node.minimum === undefined ? '' : ` ≥ ${node.minimum}`) : ` ${node.minimum ?? ''}–${node.maximum}`;
  switch (node.type) {
    case 'string':
      return node.title !== undefined && node.examples !== undefined ? `${node.title} (such as ${node.examples.map((e) => `\`${String(e)}\``).join(', ')})` : 'string';
    case 'integer':
      return `integer${range}`;
    case 'array':
      return node.items === undefined ? 'list' : `list of ${typeOf(node.items)}`;
    case 'object':
      return node.patternProperties === undefined ? 'mapping' : 'mapping by name';
    default:
      return node.type ?? 'any';
  }
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function table(rows: readonly Row[]): string[] {
  if (rows.length === 0) return [];
  return ['| Option | Type | Default | Description |', '| --- | --- | --- | --- |', ...rows.map((r) => `| \`${cell(r.path)}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.description)} |`)];
}
