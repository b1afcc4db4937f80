// `gateway admin …`: thin wrappers over src/admin, against the store the config names, or with
// --url over the management API (./admin-api.ts); the commands themselves are ./admin-commands.ts.
import { userInfo } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import type { OperatorDeps } from '../admin/deps.ts';
import { migrate } from '../admin/migrate.ts';
import { loadConfigFile } from '../config/load.ts';
import { createLogger } from '../log.ts';
import { createAdminServices } from '../services.ts';
import { backupDatabase, BackupError } from '../store/backup.ts';
import { localApi, remoteApi, type AdminApi } from './admin-api.ts';
import { registerApps, registerDevelopers, registerKeys, registerTokens } from './admin-commands.ts';
import { registerAppsAsCode } from './apps-as-code.ts';
import { commandConfig, DEFAULT_CONFIG } from './config.ts';
import { CliError, logStream, terminalText, type CliIo } from './io.ts';
import { registerManagementClients } from './management-clients.ts';
import { registerUsage } from './usage.ts';

export interface Common {
  config: string;
  json?: boolean;
  url?: string;
}

/** What each command group's registration uses: leaf commands, and the output. */
export interface Leaves {
  /** A leaf command with the shared options, run on the store the config names, or with --url over the management API. */
  leaf<O extends Common>(parent: Command, spec: string, description: string, run: (api: AdminApi, opts: O, args: string[]) => Promise<void>): Command;
  /** A leaf command run on the store the config names only. */
  local<O extends Common>(parent: Command, spec: string, description: string, run: (deps: OperatorDeps, opts: O, args: string[]) => Promise<void>): Command;
  /** JSON escapes control characters itself; the human form is escaped for the terminal. */
  show(opts: { json?: boolean }, value: unknown, human: () => string): void;
}

const URL_HELP = 'run over the management API at this URL (default: $GATEWAY_MANAGEMENT_URL), as the client in $GATEWAY_MANAGEMENT_KEY and $GATEWAY_MANAGEMENT_SECRET';

export function registerAdmin(program: Command, io: CliIo): void {
  const admin = program.command('admin').description('manage developers, apps and keys in the store the config names, or over the management API');
  /** Runs `run` with src/admin's deps on the store the config names, closed after. */
  async function onStore(cmd: Command, run: (deps: OperatorDeps) => Promise<void>): Promise<void> {
    const config = commandConfig(cmd, io);
    const services = await createAdminServices(config, createLogger(config.log.level, logStream(io)));
    try {
      await run({
        ...services,
        products: config.products,
        portal: config.portal,
        keyOverlapMs: config.keyOverlapMs,
        signing: config.oauth.signing,
        operator: { kind: 'operator', user: operatorName() },
      });
    } finally {
      await services.store.close();
    }
  }
  const command = (parent: Command, spec: string, description: string) =>
    parent.command(spec).description(description).option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG).option('--json', 'machine-readable output');
  const leaves: Leaves = {
    leaf(parent, spec, description, run) {
      return command(parent, spec, description)
        .option('--url <url>', URL_HELP)
        .action(async (...argv: unknown[]) => {
          const cmd = argv[argv.length - 1] as Command;
          const opts = cmd.opts<Common>();
          const url = opts.url ?? io.env.GATEWAY_MANAGEMENT_URL;
          if (url === undefined || url === '') return onStore(cmd, (deps) => run(localApi(deps), cmd.opts(), cmd.args));
          await run(remoteApi(url, managementCredentials(io)), cmd.opts(), cmd.args);
        });
    },
    local(parent, spec, description, run) {
      return command(parent, spec, description).action(async (...argv: unknown[]) => {
        const cmd = argv[argv.length - 1] as Command;
        await onStore(cmd, (deps) => run(deps, cmd.opts(), cmd.args));
      });
    },
    show: (opts, value, human) => io.out(opts.json === true ? JSON.stringify(value, null, 2) : terminalText(human())),
  };
  registerDevelopers(admin, leaves);
  registerApps(admin, leaves);
  registerKeys(admin, leaves, io);
  registerTokens(admin, leaves);
  registerAppsAsCode(admin, leaves, io);
  registerManagementClients(admin, leaves.local, leaves.show);
  registerUsage(admin, leaves, io);
  registerBackup(admin, io, leaves.show);
  registerMigrate(admin, io, leaves.show);
}

/** The management client --url acts as, from the environment: never from the command line, where any user of the machine could read it. */
function managementCredentials(io: CliIo): { key: string; secret: string } {
  const key = io.env.GATEWAY_MANAGEMENT_KEY;
  const secret = io.env.GATEWAY_MANAGEMENT_SECRET;
  if (key === undefined || key === '' || secret === undefined || secret === '') {
    throw new CliError('--url needs a management client: set GATEWAY_MANAGEMENT_KEY and GATEWAY_MANAGEMENT_SECRET (made with `gateway admin management-clients create`)');
  }
  return { key, secret };
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
    .description('copy developers, apps, keys, live tokens and signing keys into an empty store (SQLite to Redis, or back)')
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
          `migrated ${plural(result.developers, 'developer')}, ${plural(result.apps, 'app')}, ${plural(result.credentials, 'credential')}, ${plural(result.tokens, 'token')}, ${plural(result.signingKeys, 'signing key')}`,
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
hashes only), the tokens that still work, with their ids, and the signing
keys, so that clients and tokens (JWTs too) go on working. Stop the gateways on
the source first: what they do meanwhile is not carried over.

Not carried over: portal sessions (developers log in again), mailed links and
invitations (asked for again), login throttles, quota counts and usage.

The secret hashes are keyed, and the signing keys encrypted, with the source's
secret key file: when the target's store.secretKeyFile does not exist, the
source's is copied there (0600); when it holds another key, nothing is
migrated.`;

/** Who runs `gateway admin`, for the audit lines: the OS account's name, or its uid where it has none (a container's arbitrary uid). */
function operatorName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid:${process.getuid?.() ?? 'unknown'}`;
  }
}
