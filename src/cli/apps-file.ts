// The file of apps as code (`gateway admin diff|apply -f apps.yaml`): its schema, and every entry
// checked as the operations will check it, so that a bad entry stops `apply` before it changes
// anything, with the entry's YAML path and line.
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { CLIENT_TYPES, requireRedirectUris, requireTypeFits, type ProductGrants } from '../admin/app-rules.ts';
import { AdminError } from '../admin/errors.ts';
import { normaliseEmail, requireName } from '../admin/inputs.ts';
import { MANAGEMENT_DEVELOPER } from '../admin/management-clients.ts';
import { ConfigError, inLineOrder, type ConfigIssue, type Segments } from '../config/errors.ts';
import { schemaIssues } from '../config/messages.ts';
import { readYaml } from '../config/yaml.ts';
import type { ClientType } from '../store/port/index.ts';
import { CliError } from './io.ts';

const Status = { enum: ['active', 'disabled'] };
const FILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['developers'],
  properties: {
    developers: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['email', 'name'],
        properties: {
          email: { type: 'string', minLength: 3, maxLength: 254 },
          name: { type: 'string', minLength: 1, maxLength: 100 },
          status: Status,
          apps: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'product'],
              properties: {
                name: { type: 'string', minLength: 1, maxLength: 100 },
                product: { type: 'string', minLength: 1 },
                status: Status,
                type: { enum: CLIENT_TYPES },
                redirectUris: { type: 'array', items: { type: 'string' } },
              },
            },
          },
        },
      },
    },
  },
} as const;

export interface DeclaredApp {
  name: string;
  product: string;
  status?: 'active' | 'disabled';
  /** Absent: confidential. */
  type?: ClientType;
  /** Absent: none. */
  redirectUris?: string[];
}
export interface DeclaredDeveloper {
  email: string;
  name: string;
  status?: 'active' | 'disabled';
  apps?: DeclaredApp[];
}

/**
 * The file's developers, checked against its schema, then entry by entry: emails and names as
 * src/admin checks them, no repeats, no reserved developer; then, once the file is sound and when
 * the gateway's products can be read, no product it does not declare, and each app's type and
 * redirect URIs as its product's grants ask (src/admin/app-rules.ts). Every problem with its YAML
 * path and line.
 */
export async function readAppsFile(file: string, knownProducts: () => Promise<readonly ProductGrants[] | undefined>): Promise<DeclaredDeveloper[]> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const source = readYaml(text, file, {});
  const validate = new Ajv({ allErrors: true, strict: true, verbose: true }).compile(FILE_SCHEMA);
  if (!validate(source.plain)) throw new ConfigError(file, inLineOrder(schemaIssues(validate.errors ?? [], source.lineAt)));
  const developers = (source.plain as { developers: DeclaredDeveloper[] }).developers;
  const issues: ConfigIssue[] = [];
  const report = (segments: Segments, message: string) =>
    issues.push({ path: segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : `${i === 0 ? '' : '.'}${s}`)).join(''), message, line: source.lineAt(segments) });
  const emails = new Map<string, number>();
  developers.forEach((dev, i) => {
    const email = checked(() => normaliseEmail(dev.email), ['developers', i, 'email'], report) ?? dev.email.trim().toLowerCase();
    // The management clients' developer is no one's: apply neither creates nor changes it.
    if (email === MANAGEMENT_DEVELOPER) report(['developers', i, 'email'], `${email} is reserved for the management API's clients`);
    if (emails.has(email)) report(['developers', i, 'email'], `${email} is declared twice (first at developers[${emails.get(email)}])`);
    emails.set(email, i);
    checked(() => requireName(dev.name, 'the developer name'), ['developers', i, 'name'], report);
    const names = new Set<string>();
    (dev.apps ?? []).forEach((app, j) => {
      const at: Segments = ['developers', i, 'apps', j];
      checked(() => requireName(app.name, 'the app name'), [...at, 'name'], report);
      if (names.has(app.name.trim())) report([...at, 'name'], `${email} has two apps named "${app.name}"`);
      names.add(app.name.trim());
    });
  });
  if (issues.length > 0) throw new ConfigError(file, inLineOrder(issues));
  const products = await knownProducts();
  if (products !== undefined) {
    const byName = new Map(products.map((p) => [p.name, p]));
    for (const [i, dev] of developers.entries()) {
      for (const [j, app] of (dev.apps ?? []).entries()) {
        const at: Segments = ['developers', i, 'apps', j];
        const product = byName.get(app.product);
        if (product === undefined) {
          report([...at, 'product'], `no API product "${app.product}" (known: ${[...byName.keys()].join(', ')})`);
          continue;
        }
        // One problem per app: a type that does not fit its product says it all.
        const fits = checked(
          () => {
            requireTypeFits(product, app.type ?? 'confidential');
            return true;
          },
          [...at, app.type === undefined ? 'product' : 'type'],
          report,
        );
        if (fits) checked(() => requireRedirectUris(product, app.redirectUris ?? [], app.type ?? 'confidential'), app.redirectUris === undefined ? at : [...at, 'redirectUris'], report);
      }
    }
  }
  if (issues.length > 0) throw new ConfigError(file, issues);
  return developers.map((d) => ({ ...d, email: d.email.trim().toLowerCase(), name: d.name.trim(), apps: (d.apps ?? []).map((a) => ({ ...a, name: a.name.trim() })) }));
}

/** What `check` returns, or undefined once the AdminError it threw is reported at `segments`. */
function checked<T>(check: () => T, segments: Segments, report: (segments: Segments, message: string) => void): T | undefined {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof AdminError)) throw err;
    report(segments, err.message);
    return undefined;
  }
}
