// Apps as code, as decK is for Kong: `gateway admin diff -f apps.yaml` shows what `gateway admin
// apply -f apps.yaml [--prune]` would change to bring developers and their apps to the file's
// state, locally or with --url over the management API. Secrets are never in the file: a new app's
// key and secret are printed once, or written to a file of the operator's with mode 0600.
import { readFileSync, writeFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import type { Command } from 'commander';
import type { AppDetails } from '../admin/apps.ts';
import { ConfigError } from '../config/errors.ts';
import { schemaIssues } from '../config/messages.ts';
import { inLineOrder, type ConfigIssue } from '../config/errors.ts';
import { readYaml } from '../config/yaml.ts';
import type { Developer } from '../store/port/index.ts';
import type { AdminApi, CreatedView } from './admin-api.ts';
import type { Common, Leaves } from './admin.ts';
import { CliError, terminalText, type CliIo } from './io.ts';

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
              properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, product: { type: 'string', minLength: 1 }, status: Status },
            },
          },
        },
      },
    },
  },
} as const;

interface DeclaredApp {
  name: string;
  product: string;
  status?: 'active' | 'disabled';
}
interface DeclaredDeveloper {
  email: string;
  name: string;
  status?: 'active' | 'disabled';
  apps?: DeclaredApp[];
}

/** One change of the plan: what it does, in words, and the call that makes it. */
interface Change {
  action: 'create' | 'enable' | 'approve' | 'disable' | 'delete';
  kind: 'developer' | 'app';
  developer: string;
  app?: string;
  product?: string;
  make: (api: AdminApi) => Promise<CreatedView | undefined>;
}

const ING = { create: 'creating', enable: 'enabling', approve: 'approving', disable: 'disabling', delete: 'deleting' } as const;
const line = (c: Change) => `${ING[c.action]} ${c.kind} ${c.developer}${c.app === undefined ? '' : `/${c.app}`}${c.action === 'create' && c.product !== undefined ? ` (product ${c.product})` : ''}`;

/** The file's developers, checked against its schema and for repeats; every problem with its YAML path and line. */
export function readAppsFile(file: string): DeclaredDeveloper[] {
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
  const emails = new Map<string, number>();
  developers.forEach((dev, i) => {
    const email = dev.email.trim().toLowerCase();
    if (emails.has(email))
      issues.push({ path: `developers[${i}].email`, message: `${email} is declared twice (first at developers[${emails.get(email)}])`, line: source.lineAt(['developers', i, 'email']) });
    emails.set(email, i);
    const names = new Set<string>();
    (dev.apps ?? []).forEach((app, j) => {
      if (names.has(app.name.trim()))
        issues.push({ path: `developers[${i}].apps[${j}].name`, message: `${email} has two apps named "${app.name}"`, line: source.lineAt(['developers', i, 'apps', j, 'name']) });
      names.add(app.name.trim());
    });
  });
  if (issues.length > 0) throw new ConfigError(file, issues);
  return developers.map((d) => ({ ...d, email: d.email.trim().toLowerCase(), name: d.name.trim(), apps: (d.apps ?? []).map((a) => ({ ...a, name: a.name.trim() })) }));
}

/**
 * The changes that bring the store to the file: developers first, then their apps, then what is
 * switched off, then (with prune) what the file does not name; an app whose product differs
 * cannot change in place (an app has one product for good), and fails the whole plan.
 */
export function plan(declared: readonly DeclaredDeveloper[], developers: readonly Developer[], apps: readonly AppDetails[], prune: boolean): Change[] {
  const byEmail = new Map(developers.map((d) => [d.email, d]));
  const appsOf = (email: string) => new Map(apps.filter((a) => a.developerEmail === email).map((a) => [a.name, a]));
  const first: Change[] = [];
  const then: Change[] = [];
  const last: Change[] = [];
  const conflicts: string[] = [];
  for (const dev of declared) {
    const found = byEmail.get(dev.email);
    const wanted = dev.status ?? 'active';
    const email = dev.email;
    if (found === undefined) first.push({ action: 'create', kind: 'developer', developer: email, make: async (api) => void (await api.createDeveloper({ email, name: dev.name })) });
    else if (found.status !== 'active' && wanted === 'active')
      first.push({ action: 'enable', kind: 'developer', developer: email, make: async (api) => void (await api.setDeveloperStatus(email, 'active')) });
    const held = found === undefined ? new Map<string, AppDetails>() : appsOf(email);
    for (const app of dev.apps ?? []) {
      const have = held.get(app.name);
      const ref = { developer: email, name: app.name };
      if (have === undefined) {
        first.push({ action: 'create', kind: 'app', developer: email, app: app.name, product: app.product, make: (api) => api.createApp({ developer: email, name: app.name, product: app.product }) });
        if (app.status === 'disabled') then.push({ action: 'disable', kind: 'app', developer: email, app: app.name, make: async (api) => void (await api.setAppStatus(ref, 'disabled')) });
        continue;
      }
      if (have.product !== app.product)
        conflicts.push(`${email}/${app.name} is an app of product ${have.product}, not ${app.product}: an app keeps its product; declare a new app (and delete this one)`);
      if (have.approval === 'pending') then.push({ action: 'approve', kind: 'app', developer: email, app: app.name, make: async (api) => void (await api.approveApp(ref)) });
      if (have.status !== (app.status ?? 'active')) {
        const status = app.status ?? 'active';
        then.push({ action: status === 'active' ? 'enable' : 'disable', kind: 'app', developer: email, app: app.name, make: async (api) => void (await api.setAppStatus(ref, status)) });
      }
    }
    if (found !== undefined && found.status === 'active' && wanted === 'disabled')
      last.push({ action: 'disable', kind: 'developer', developer: email, make: async (api) => void (await api.setDeveloperStatus(email, 'disabled')) });
    if (found === undefined && wanted === 'disabled')
      last.push({ action: 'disable', kind: 'developer', developer: email, make: async (api) => void (await api.setDeveloperStatus(email, 'disabled')) });
    if (prune) {
      const named = new Set((dev.apps ?? []).map((a) => a.name));
      for (const [name] of held) {
        if (!named.has(name)) last.push({ action: 'delete', kind: 'app', developer: email, app: name, make: async (api) => void (await api.deleteApp({ developer: email, name })) });
      }
    }
  }
  if (prune) {
    const named = new Set(declared.map((d) => d.email));
    for (const dev of developers) {
      if (!named.has(dev.email)) last.push({ action: 'delete', kind: 'developer', developer: dev.email, make: async (api) => void (await api.deleteDeveloper(dev.email)) });
    }
  }
  if (conflicts.length > 0) throw new CliError(`nothing was changed:\n${conflicts.join('\n')}`);
  return [...first, ...then, ...last];
}

/** A new app's key and secret, as the secrets file holds them. */
interface NewSecret {
  developer: string;
  app: string;
  product: string;
  key: string;
  secret: string;
}

export function registerAppsAsCode(admin: Command, { leaf, show }: Leaves, io: CliIo): void {
  leaf<Common & { file: string; prune?: boolean }>(admin, 'diff', 'what `apply` would change to bring developers and apps to the file (changes nothing)', async (api, opts) => {
    const changes = await planned(api, opts);
    show(opts, changes.map(view), () => summary(changes, 'would change'));
  })
    .requiredOption('-f, --file <file>', 'the declared developers and apps (YAML)')
    .option('--prune', 'include deleting the developers and apps the file does not name');
  leaf<Common & { file: string; prune?: boolean; secretsFile?: string }>(
    admin,
    'apply',
    'bring developers and apps to the file: create, approve, enable and disable (and with --prune delete)',
    async (api, opts) => {
      const changes = await planned(api, opts);
      if (opts.secretsFile !== undefined && changes.some((c) => c.kind === 'app' && c.action === 'create')) {
        // Checked before any change: the secrets of new apps must have a place to go.
        try {
          writeFileSync(opts.secretsFile, '', { flag: 'wx', mode: 0o600 });
        } catch (err) {
          throw new CliError(`nothing was changed: cannot create ${opts.secretsFile} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); name a file that does not exist`);
        }
      }
      const secrets: NewSecret[] = [];
      try {
        for (const change of changes) {
          if (opts.json !== true) io.out(terminalText(line(change)));
          const created = await change.make(api);
          if (created !== undefined) {
            secrets.push({ developer: change.developer, app: change.app!, product: created.product, key: created.key, secret: created.secret });
            if (opts.secretsFile === undefined && opts.json !== true) io.out(`  key:    ${created.key}\n  secret: ${created.secret}`);
          }
        }
      } finally {
        // Whatever was made before a failure keeps its secret: it is shown nowhere else.
        if (opts.secretsFile !== undefined && secrets.length > 0) writeFileSync(opts.secretsFile, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
      }
      const done = opts.json === true ? { changes: changes.map(view), ...(opts.secretsFile === undefined ? { secrets } : { secretsFile: opts.secretsFile }) } : undefined;
      show(
        opts,
        done,
        () =>
          `${summary(changes, 'changed', false)}${secrets.length > 0 && opts.secretsFile !== undefined ? `; the new keys and secrets are in ${opts.secretsFile}` : secrets.length > 0 ? '; the secrets are shown only now' : ''}`,
      );
    },
  )
    .requiredOption('-f, --file <file>', 'the declared developers and apps (YAML)')
    .option('--prune', 'delete the developers and apps the file does not name (with their keys and tokens)')
    .option('--secrets-file <file>', "write new apps' keys and secrets here (JSON, mode 0600, a new file) instead of printing them");
}

async function planned(api: AdminApi, opts: { file: string; prune?: boolean }): Promise<Change[]> {
  let declared: DeclaredDeveloper[];
  try {
    declared = readAppsFile(opts.file);
  } catch (err) {
    throw err instanceof ConfigError ? new CliError(`invalid apps file:\n${err.message}`, 2) : err;
  }
  const [developers, apps] = await Promise.all([api.listDevelopers(), api.listApps()]);
  return plan(declared, developers, apps, opts.prune === true);
}

const view = (c: Change) => ({ action: c.action, kind: c.kind, developer: c.developer, ...(c.app === undefined ? {} : { app: c.app }), ...(c.product === undefined ? {} : { product: c.product }) });

function summary(changes: readonly Change[], verb: string, list = true): string {
  if (changes.length === 0) return 'no changes';
  const lines = list ? changes.map(line) : [];
  return [...lines, `${changes.length} change${changes.length === 1 ? '' : 's'} ${verb === 'changed' ? 'made' : verb === 'would change' ? 'to make' : verb}`].join('\n');
}
