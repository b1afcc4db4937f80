// Apps as code, as decK is for Kong: `gateway admin diff -f apps.yaml` shows what `gateway admin
// apply -f apps.yaml [--prune]` would change to bring developers and their apps to the file's
// state, locally or with --url over the management API. Secrets are never in the file: a new app's
// key and secret are printed once, or written to a file of the operator's with mode 0600.
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { AppDetails } from '../admin/apps.ts';
import { ConfigError } from '../config/errors.ts';
import type { Developer } from '../store/port/index.ts';
import type { AdminApi, CreatedView } from './admin-api.ts';
import type { Common, Leaves } from './admin.ts';
import { readAppsFile, type DeclaredApp, type DeclaredDeveloper } from './apps-file.ts';
import { CliError, terminalText, type CliIo } from './io.ts';

/** One change of the plan: what it does, in words, and the call that makes it. */
interface Change {
  action: 'create' | 'enable' | 'approve' | 'redirect-uris' | 'disable' | 'delete';
  kind: 'developer' | 'app';
  developer: string;
  app?: string;
  product?: string;
  /** A new app's, when public. */
  type?: 'public';
  /** A new app's, or what the app's are replaced with. */
  redirectUris?: readonly string[];
  make: (api: AdminApi) => Promise<CreatedView | undefined>;
}

const ING = { create: 'creating', enable: 'enabling', approve: 'approving', 'redirect-uris': 'replacing the redirect URIs of', disable: 'disabling', delete: 'deleting' } as const;
const created = (c: Change) => (c.product === undefined ? '' : ` (product ${c.product}${c.type === undefined ? '' : `, ${c.type}`})`);
const line = (c: Change) => `${ING[c.action]} ${c.kind} ${c.developer}${c.app === undefined ? '' : `/${c.app}`}${c.action === 'create' ? created(c) : ''}`;

/** The plan's changes in the order they are made. */
interface Steps {
  first: Change[];
  next: Change[];
  last: Change[];
  conflicts: string[];
}

/**
 * The changes that bring the store to the file: developers first, then their apps, then what is
 * switched off, then (with prune) what the file does not name. What cannot be made fails the
 * whole plan, before any change: an app whose product or type differs (an app has one of each for
 * good), a new app for a developer who is and stays disabled.
 */
export function plan(declared: readonly DeclaredDeveloper[], developers: readonly Developer[], apps: readonly AppDetails[], prune: boolean): Change[] {
  const byEmail = new Map(developers.map((d) => [d.email, d]));
  const steps: Steps = { first: [], next: [], last: [], conflicts: [] };
  for (const dev of declared) {
    const email = dev.email;
    const wanted = dev.status ?? 'active';
    // An address nobody confirmed (an open sign-up) holds no app, and creating the developer
    // replaces it, as `developers create` does.
    const found = byEmail.get(email)?.verified === true ? byEmail.get(email) : undefined;
    const setStatus = (status: Developer['status']) => async (api: AdminApi) => void (await api.setDeveloperStatus(email, status));
    if (found === undefined) steps.first.push({ action: 'create', kind: 'developer', developer: email, make: async (api) => void (await api.createDeveloper({ email, name: dev.name })) });
    else if (found.status !== 'active' && wanted === 'active') steps.first.push({ action: 'enable', kind: 'developer', developer: email, make: setStatus('active') });
    const held = new Map(found === undefined ? [] : apps.filter((a) => a.developerEmail === email).map((a) => [a.name, a]));
    planApps(email, dev.apps ?? [], held, prune, steps);
    const added = (dev.apps ?? []).filter((a) => !held.has(a.name)).map((a) => a.name);
    if (found?.status === 'disabled' && wanted === 'disabled' && added.length > 0)
      steps.conflicts.push(`${email} is disabled: no app can be registered for them (${added.join(', ')}); declare them active, or leave the app out`);
    if (found?.status !== 'disabled' && wanted === 'disabled') steps.last.push({ action: 'disable', kind: 'developer', developer: email, make: setStatus('disabled') });
  }
  if (prune) {
    const named = new Set(declared.map((d) => d.email));
    for (const dev of developers) {
      if (!named.has(dev.email)) steps.last.push({ action: 'delete', kind: 'developer', developer: dev.email, make: async (api) => void (await api.deleteDeveloper(dev.email)) });
    }
  }
  if (steps.conflicts.length > 0) throw new CliError(`nothing was changed:\n${steps.conflicts.join('\n')}`);
  return [...steps.first, ...steps.next, ...steps.last];
}

/** The changes to one developer's apps: `held` are those they have. */
function planApps(email: string, declared: readonly DeclaredApp[], held: ReadonlyMap<string, AppDetails>, prune: boolean, steps: Steps): void {
  for (const app of declared) {
    const have = held.get(app.name);
    const ref = { developer: email, name: app.name };
    const status = app.status ?? 'active';
    const setStatus = async (api: AdminApi) => void (await api.setAppStatus(ref, status));
    const type = app.type ?? 'confidential';
    const redirectUris = app.redirectUris ?? [];
    if (have === undefined) {
      steps.first.push({
        action: 'create',
        kind: 'app',
        developer: email,
        app: app.name,
        product: app.product,
        ...(type === 'public' && { type }),
        ...(redirectUris.length > 0 && { redirectUris }),
        make: (api) => api.createApp({ developer: email, name: app.name, product: app.product, type, redirectUris }),
      });
      if (status === 'disabled') steps.next.push({ action: 'disable', kind: 'app', developer: email, app: app.name, make: setStatus });
      continue;
    }
    if (have.product !== app.product)
      steps.conflicts.push(`${email}/${app.name} is an app of product ${have.product}, not ${app.product}: an app keeps its product; declare a new app (and delete this one)`);
    if (have.type !== type) steps.conflicts.push(`${email}/${app.name} is a ${have.type} app, not ${type}: an app keeps its type; declare a new app (and delete this one)`);
    if (have.approval === 'pending') steps.next.push({ action: 'approve', kind: 'app', developer: email, app: app.name, make: async (api) => void (await api.approveApp(ref)) });
    if (!sameList(have.redirectUris, redirectUris)) {
      steps.next.push({ action: 'redirect-uris', kind: 'app', developer: email, app: app.name, redirectUris, make: async (api) => void (await api.setRedirectUris(ref, redirectUris)) });
    }
    if (have.status !== status) steps.next.push({ action: status === 'active' ? 'enable' : 'disable', kind: 'app', developer: email, app: app.name, make: setStatus });
  }
  if (!prune) return;
  const named = new Set(declared.map((a) => a.name));
  for (const [name] of held) {
    if (!named.has(name)) steps.last.push({ action: 'delete', kind: 'app', developer: email, app: name, make: async (api) => void (await api.deleteApp({ developer: email, name })) });
  }
}

/** Redirect URIs are matched as written, in the order registered: the same list is the same strings in the same order. */
const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** A new app's key and secret (a public app: none), as the secrets file holds them. */
interface NewSecret {
  developer: string;
  app: string;
  product: string;
  key: string;
  secret?: string;
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
      const secrets = await applyChanges(api, changes, opts, io);
      const done = opts.json === true ? { changes: changes.map(view), ...(opts.secretsFile === undefined ? { secrets } : { secretsFile: opts.secretsFile }) } : undefined;
      show(
        opts,
        done,
        () =>
          `${summary(changes, 'changed', false)}${secrets.length > 0 && opts.secretsFile !== undefined ? `; the new keys and secrets are in ${opts.secretsFile}` : secrets.some((n) => n.secret !== undefined) ? '; the secrets are shown only now' : ''}`,
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
    declared = await readAppsFile(opts.file, async () => (await api.products())?.map((p) => ({ name: p.name, grants: new Set(p.grants) })));
  } catch (err) {
    throw err instanceof ConfigError ? new CliError(`invalid apps file:\n${err.message}`, 2) : err;
  }
  const [developers, apps] = await Promise.all([api.listDevelopers(), api.listApps()]);
  return plan(declared, developers, apps, opts.prune === true);
}

/**
 * Makes the changes in order, each line printed before it is made; gives back the new apps' keys
 * and secrets. A failure part-way ends the command, but not before whatever secrets were made
 * have gone somewhere: the secrets file, the terminal, or (with --json) the partial answer.
 */
async function applyChanges(api: AdminApi, changes: readonly Change[], opts: { json?: boolean; secretsFile?: string }, io: CliIo): Promise<NewSecret[]> {
  // Made before any change: the secrets of new apps must have a place to go.
  const file = opts.secretsFile !== undefined && changes.some((c) => c.kind === 'app' && c.action === 'create') ? claimSecretsFile(opts.secretsFile) : undefined;
  const secrets: NewSecret[] = [];
  let made = 0;
  try {
    for (const change of changes) {
      if (opts.json !== true) io.out(terminalText(line(change)));
      const created = await change.make(api);
      made += 1;
      if (created === undefined) continue;
      secrets.push({ developer: change.developer, app: change.app!, product: created.product, key: created.key, ...(created.secret === undefined ? {} : { secret: created.secret }) });
      // At once: an app made before a later failure (or an interruption) keeps its secret, shown nowhere else.
      file?.write(secrets);
      if (file === undefined && opts.json !== true) io.out(`  key:    ${created.key}\n  ${created.secret === undefined ? 'public app: no secret' : `secret: ${created.secret}`}`);
    }
  } catch (err) {
    if (opts.json === true && made > 0) io.out(JSON.stringify({ changes: changes.slice(0, made).map(view), ...(file === undefined ? { secrets } : { secretsFile: opts.secretsFile }) }, null, 2));
    throw err;
  } finally {
    file?.close();
  }
  return secrets;
}

/**
 * The --secrets-file: created before any change, new (an existing file may be another's, or a
 * link) and 0600, then replaced atomically (a sibling renamed over it) after each new app, so
 * that it never holds half a list; removed again when no app was made, so that a corrected run
 * may name it again.
 */
function claimSecretsFile(file: string): { write(secrets: readonly NewSecret[]): void; close(): void } {
  try {
    writeFileSync(file, '', { flag: 'wx', mode: 0o600 });
  } catch (err) {
    throw new CliError(`nothing was changed: cannot create ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); name a file that does not exist`);
  }
  let written = false;
  return {
    write(secrets) {
      const sibling = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        writeFileSync(sibling, `${JSON.stringify(secrets, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
        renameSync(sibling, file);
      } catch (err) {
        rmSync(sibling, { force: true });
        throw err;
      }
      written = true;
    },
    close() {
      if (!written) rmSync(file, { force: true });
    },
  };
}

const view = (c: Change) => ({
  action: c.action,
  kind: c.kind,
  developer: c.developer,
  ...(c.app === undefined ? {} : { app: c.app }),
  ...(c.product === undefined ? {} : { product: c.product }),
  ...(c.type === undefined ? {} : { type: c.type }),
  ...(c.redirectUris === undefined ? {} : { redirectUris: c.redirectUris }),
});

function summary(changes: readonly Change[], verb: string, list = true): string {
  if (changes.length === 0) return 'no changes';
  const lines = list ? changes.map(line) : [];
  return [...lines, `${changes.length} change${changes.length === 1 ? '' : 's'} ${verb === 'changed' ? 'made' : verb === 'would change' ? 'to make' : verb}`].join('\n');
}
