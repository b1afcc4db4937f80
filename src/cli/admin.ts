// `gateway admin …`: thin wrappers over src/admin, against the store the config names.
import { userInfo } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { migrate } from '../admin/migrate.ts';
import { approveApp, createApp, deleteApp, findApp, listApps, revokeKey, rotateKey, setAppStatus, type AppDetails, type AppRef } from '../admin/apps.ts';
import type { OperatorDeps } from '../admin/deps.ts';
import { createDeveloper, listDevelopers, setDeveloperStatus } from '../admin/developers.ts';
import { AdminError } from '../admin/errors.ts';
import { inviteDeveloper } from '../admin/accounts.ts';
import { loadConfigFile } from '../config/load.ts';
import { backupDatabase, BackupError } from '../store/backup.ts';
import { createLogger } from '../log.ts';
import { createAdminServices } from '../services.ts';
import { isLive, type App, type Developer } from '../store/port/index.ts';
import { commandConfig, DEFAULT_CONFIG } from './config.ts';
import { registerManagementClients } from './management-clients.ts';
import { CliError, isoDate, logStream, table, terminalText, type CliIo } from './io.ts';

interface Common {
  config: string;
  json?: boolean;
}

/** What each command group's registration uses: a leaf command against an open store, and the output. */
interface Leaves {
  /** Declares a leaf command with the shared options and runs its action against an open store. */
  leaf<O extends Common>(parent: Command, spec: string, description: string, run: (deps: OperatorDeps, opts: O, args: string[]) => Promise<void>): Command;
  /** JSON escapes control characters itself; the human form is escaped for the terminal. */
  show(opts: { json?: boolean }, value: unknown, human: () => string): void;
}

export function registerAdmin(program: Command, io: CliIo): void {
  const admin = program.command('admin').description('manage developers, apps and keys in the store the config names');
  const leaves: Leaves = {
    leaf(parent, spec, description, run) {
      return parent
        .command(spec)
        .description(description)
        .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG)
        .option('--json', 'machine-readable output')
        .action(async (...argv: unknown[]) => {
          const cmd = argv[argv.length - 1] as Command;
          const config = commandConfig(cmd, io);
          const services = await createAdminServices(config, createLogger(config.log.level, logStream(io)));
          try {
            await run({ ...services, products: config.products, portal: config.portal, keyOverlapMs: config.keyOverlapMs, operator: { kind: 'operator', user: operatorName() } }, cmd.opts(), cmd.args);
          } finally {
            await services.store.close();
          }
        });
    },
    show: (opts, value, human) => io.out(opts.json === true ? JSON.stringify(value, null, 2) : terminalText(human())),
  };
  registerDevelopers(admin, leaves);
  registerApps(admin, leaves);
  registerKeys(admin, leaves);
  registerManagementClients(admin, leaves.leaf, leaves.show);
  registerBackup(admin, io, leaves.show);
  registerMigrate(admin, io, leaves.show);
}

// VERIFIED "no": an open sign-up that has not confirmed its address (`developers create` or `invite` replaces it).
const devRow = (d: Developer) => ({ email: d.email, name: d.name, status: d.status, verified: d.verified ? 'yes' : 'no', created: isoDate(d.createdAt) });
// A pending app (registered in the portal, not yet approved) shows as such until it is approved.
const appStatus = (a: App) => (a.status === 'active' && a.approval === 'pending' ? 'pending' : a.status);
const appRow = (a: App) => ({ developer: a.developerEmail, name: a.name, product: a.product, status: appStatus(a), created: isoDate(a.createdAt) });
const appRef = (args: string[], opts: { developer?: string; name?: string }): AppRef => {
  if (args[0] !== undefined) return { key: args[0] };
  if (opts.developer !== undefined && opts.name !== undefined) return { developer: opts.developer, name: opts.name };
  throw new AdminError('usage', 'name the app by its key, or by --developer and --name');
};
/** The options of a command that names an app by --developer and --name instead of its key. */
const byName = (cmd: Command) => cmd.option('--developer <email>', "the developer's email").option('--name <name>', 'app name');

function registerDevelopers(admin: Command, { leaf, show }: Leaves): void {
  const developers = admin.command('developers').description('developer accounts');
  leaf<Common & { email: string; name: string }>(developers, 'create', 'create a developer', async (deps, opts) => {
    const dev = await createDeveloper(deps, { email: opts.email, name: opts.name });
    show(opts, dev, () => `created developer ${dev.email}`);
  })
    .requiredOption('--email <email>', 'email address (unique)')
    .requiredOption('--name <name>', 'display name');
  leaf<Common & { valid: string }>(developers, 'invite <email>', 'a one-time code with which the developer sets a portal password (7 days; replaces an earlier one)', async (deps, opts, args) => {
    const days = Number(opts.valid);
    if (!Number.isInteger(days) || days < 1 || days > 90) throw new AdminError('usage', '--valid: a number of days from 1 to 90');
    const invite = await inviteDeveloper(deps, args[0]!, days * 86_400_000);
    const portal = deps.portal;
    const origin = portal && (portal.publicUrl ?? `${portal.tls === undefined ? 'http' : 'https'}://localhost:${portal.port}`);
    const link = origin && `${origin}/signup?${new URLSearchParams({ email: invite.developer.email, invitation: invite.code })}`;
    show(opts, { email: invite.developer.email, code: invite.code, expiresAt: invite.expiresAt, ...(link ? { link } : {}) }, () =>
      [
        `invitation for ${invite.developer.email}, valid until ${isoDate(invite.expiresAt)}:`,
        `code: ${invite.code}`,
        ...(link ? [`link: ${link}`] : []),
        'The code is shown only now. The developer enters it at sign-up in the portal to set a password.',
      ].join('\n'),
    );
  }).option('--valid <days>', 'days the code works', '7');
  leaf(developers, 'list', 'list developers', async (deps, opts) => {
    const list = await listDevelopers(deps);
    show(opts, list, () => table(list.map(devRow), ['email', 'name', 'status', 'verified', 'created']));
  });
  for (const [verb, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    leaf(developers, `${verb} <email>`, `${verb} a developer${verb === 'disable' ? ': no new tokens, and their tokens stop working' : ''}`, async (deps, opts, args) => {
      const dev = await setDeveloperStatus(deps, args[0]!, status);
      show(opts, dev, () => `developer ${dev.email} is ${dev.status}`);
    });
  }
}

function registerApps(admin: Command, { leaf, show }: Leaves): void {
  const apps = admin.command('apps').description('developer apps');
  leaf<Common & { developer: string; name: string; product: string }>(apps, 'create', 'register an app; prints its key and secret once', async (deps, opts) => {
    const created = await createApp(deps, { developer: opts.developer, name: opts.name, product: opts.product });
    show(opts, { ...created.app, key: created.key, secret: created.secret }, () =>
      [
        `created app "${created.app.name}" for ${created.app.developerEmail}, API product ${created.app.product}`,
        `key:    ${created.key}`,
        `secret: ${created.secret}`,
        'The secret is shown only now; store it safely.',
      ].join('\n'),
    );
  })
    .requiredOption('--developer <email>', "the developer's email")
    .requiredOption('--name <name>', 'app name (unique per developer)')
    .requiredOption('--product <product>', 'API product');
  leaf<Common & { developer?: string }>(apps, 'list', 'list apps', async (deps, opts) => {
    const list = await listApps(deps, opts.developer === undefined ? {} : { developer: opts.developer });
    // Keys that authenticate: the current one, and earlier ones until their overlap ends.
    const keys = (app: AppDetails) =>
      app.credentials
        .filter((c) => isLive(c, deps.clock()))
        .map((c) => (c.expiresAt === null ? c.key : `${c.key} (until ${isoDate(c.expiresAt)})`))
        .join(', ');
    show(opts, list, () =>
      table(
        list.map((app) => ({ ...appRow(app), keys: keys(app) })),
        ['developer', 'name', 'product', 'status', 'created', 'keys'],
      ),
    );
  }).option('--developer <email>', "only this developer's apps");
  byName(
    leaf<Common & { developer?: string; name?: string }>(apps, 'show [key]', 'show an app and its keys (never the secrets)', async (deps, opts, args) => {
      const app = await findApp(deps, appRef(args, opts));
      show(opts, app, () =>
        [
          table([appRow(app)], ['developer', 'name', 'product', 'status', 'created']),
          '',
          table(
            app.credentials.map((c) => ({ key: c.key, status: c.status, created: isoDate(c.createdAt), expires: isoDate(c.expiresAt) })),
            ['key', 'status', 'created', 'expires'],
          ),
        ].join('\n'),
      );
    }),
  );
  for (const [verb, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    byName(
      leaf<Common & { developer?: string; name?: string }>(
        apps,
        `${verb} [key]`,
        `${verb} an app${verb === 'disable' ? ': no new tokens, and its tokens stop working' : ''}`,
        async (deps, opts, args) => {
          const app = await setAppStatus(deps, appRef(args, opts), status);
          show(opts, app, () => `app "${app.name}" of ${app.developerEmail} is ${app.status}`);
        },
      ),
    );
  }
  byName(
    leaf<Common & { developer?: string; name?: string }>(
      apps,
      'approve [key]',
      'approve an app registered in the portal for a product with approval: manual; its keys work at once',
      async (deps, opts, args) => {
        const app = await approveApp(deps, appRef(args, opts));
        show(opts, app, () => `app "${app.name}" of ${app.developerEmail} is approved${app.status === 'disabled' ? ' (and still disabled)' : ''}`);
      },
    ),
  );
  byName(
    leaf<Common & { developer?: string; name?: string }>(apps, 'delete [key]', 'delete an app and its keys: its tokens stop working at once', async (deps, opts, args) => {
      const app = await deleteApp(deps, appRef(args, opts));
      show(opts, { ...app, deleted: true }, () => `app "${app.name}" of ${app.developerEmail} is deleted`);
    }),
  );
}

function registerKeys(admin: Command, { leaf, show }: Leaves): void {
  const keys = admin.command('keys').description('app keys (client credentials)');
  byName(
    leaf<Common & { developer?: string; name?: string }>(
      keys,
      'rotate [key]',
      "give an app a new key and secret; its earlier keys work until the portal's keyOverlap ends",
      async (deps, opts, args) => {
        const rotated = await rotateKey(deps, appRef(args, opts));
        show(opts, { ...rotated.app, key: rotated.key, secret: rotated.secret, overlapUntil: rotated.overlapUntil }, () =>
          [
            `new key for app "${rotated.app.name}" of ${rotated.app.developerEmail}`,
            `key:    ${rotated.key}`,
            `secret: ${rotated.secret}`,
            `The earlier keys work until ${isoDate(rotated.overlapUntil)}. The secret is shown only now; store it safely.`,
          ].join('\n'),
        );
      },
    ),
  );
  leaf(keys, 'revoke <key>', 'revoke a key: no new tokens with it, and the tokens issued through it stop working', async (deps, opts, args) => {
    await revokeKey(deps, args[0]!);
    show(opts, { key: args[0], status: 'revoked' }, () => `key ${args[0]} is revoked`);
  });
}

/** Not a leaf: it reads the store through a connection of its own and never opens (or migrates) it. */
function registerBackup(admin: Command, io: CliIo, show: Leaves['show']): void {
  admin
    .command('backup')
    .description('copy the live database and its secret key file, consistently, while the gateway serves')
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG)
    .option('--json', 'machine-readable output')
    .requiredOption('--to <file>', 'the copy; its key file is <file>.key')
    .option('--force', 'replace the copy and its key file if they exist')
    .action(async (opts: Common & { to: string; force?: boolean }, cmd: Command) => {
      const { store } = commandConfig(cmd, io);
      if (store.driver !== 'sqlite') throw new CliError('admin backup copies a SQLite store; back up Redis with its own snapshots (RDB or AOF), and keep store.secretKeyFile with them');
      const to = path.resolve(opts.to);
      try {
        const { pages, keyFile } = await backupDatabase(store.path, to, { keyFile: store.secretKeyFile, force: opts.force === true });
        show(opts, { database: store.path, to, pages, keyFile }, () => `backed up ${store.path} to ${to} (${pages} pages, key file ${keyFile})`);
      } catch (err) {
        throw err instanceof BackupError ? new CliError(err.message) : err;
      }
    });
}

/** Not a leaf: it opens two stores, each from a configuration of its own. */
function registerMigrate(admin: Command, io: CliIo, show: Leaves['show']): void {
  admin
    .command('migrate')
    .description('copy developers, apps, keys and live tokens into an empty store (SQLite to Redis, or back)')
    .requiredOption('--from <file>', 'the configuration whose store is copied')
    .requiredOption('--to <file>', 'the configuration whose store, empty, receives the copy')
    .option('--json', 'machine-readable output')
    .addHelpText('after', MIGRATE_HELP)
    .action(async (opts: { from: string; to: string; json?: boolean }) => {
      const from = loadConfigFile(opts.from, { env: io.env });
      const to = loadConfigFile(opts.to, { env: io.env });
      const logger = createLogger(from.log.level, logStream(io));
      const result = await migrate({ clock: Date.now, logger, operator: { kind: 'operator', user: operatorName() } }, from.store, to.store);
      const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
      show(opts, result, () =>
        [
          `migrated ${plural(result.developers, 'developer')}, ${plural(result.apps, 'app')}, ${plural(result.credentials, 'credential')}, ${plural(result.tokens, 'token')}`,
          ...(result.secretKeyCopied ? [`copied the secret key file to ${result.secretKeyFile}`] : []),
          NOT_MIGRATED,
        ].join('\n'),
      );
    });
}

const NOT_MIGRATED = 'not carried over: portal sessions, mailed links, invitations, login throttles, quota counts and usage';

const MIGRATE_HELP = `
Copies from the store that the --from configuration names into the one that
--to names, which must hold no developer: developers (with their portal
password, and whether they confirmed their address), apps, keys (their secret
hashes only) and the tokens that still work, with their ids, so that clients
and tokens go on working. Stop the gateways on the source first: what they do
meanwhile is not carried over.

Not carried over: portal sessions (developers log in again), mailed links and
invitations (asked for again), login throttles, quota counts and usage.

The secret hashes are keyed with the source's secret key file: when the
target's store.secretKeyFile does not exist, the source's is copied there
(0600); when it holds another key, nothing is migrated.`;

/** Who runs `gateway admin`, for the audit lines: the OS account's name, or its uid where it has none (a container's arbitrary uid). */
function operatorName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid:${process.getuid?.() ?? 'unknown'}`;
  }
}
