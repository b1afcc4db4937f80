// `gateway admin management-clients …`: the clients of the management API, made, listed and
// deleted on the store the config names (never through the API itself: a client cannot mint another).
import type { Command } from 'commander';
import type { OperatorDeps } from '../admin/deps.ts';
import { createManagementClient, deleteManagementClient, listManagementClients, MANAGEMENT_SCOPES } from '../admin/management-clients.ts';
import { isoDate, table } from './io.ts';

type Leaf = <O extends { config: string; json?: boolean }>(parent: Command, spec: string, description: string, run: (deps: OperatorDeps, opts: O, args: string[]) => Promise<void>) => Command;
type Show = (opts: { json?: boolean }, value: unknown, human: () => string) => void;

export function registerManagementClients(admin: Command, leaf: Leaf, show: Show): void {
  const clients = admin.command('management-clients').description('clients of the management API (management: in the config)');
  leaf<{ config: string; json?: boolean; name: string; scopes: string }>(clients, 'create', 'make a management client; prints its key and secret once', async (deps, opts) => {
    const scopes = opts.scopes
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const created = await createManagementClient(deps, { name: opts.name, scopes });
    show(opts, { ...created.app, key: created.key, secret: created.secret }, () =>
      [
        `created management client "${created.app.name}" with scopes ${(created.app.scopes ?? []).join(' ')}`,
        `key:    ${created.key}`,
        `secret: ${created.secret}`,
        'The secret is shown only now; store it safely. Get tokens at the management listener: POST /oauth2/token, grant_type=client_credentials.',
      ].join('\n'),
    );
  })
    .requiredOption('--scopes <scopes>', `scopes, comma-separated: ${Object.keys(MANAGEMENT_SCOPES).join(', ')}`)
    .option('--name <name>', 'a name for the client (unique)', 'automation');
  leaf(clients, 'list', 'list management clients', async (deps, opts) => {
    const list = await listManagementClients(deps);
    show(opts, list, () =>
      table(
        list.map((c) => ({ name: c.name, scopes: (c.scopes ?? []).join(' '), status: c.status, created: isoDate(c.createdAt), keys: c.keys.join(', ') })),
        ['name', 'scopes', 'status', 'created', 'keys'],
      ),
    );
  });
  leaf(clients, 'delete <key>', 'delete a management client: its tokens stop working at once', async (deps, opts, args) => {
    const app = await deleteManagementClient(deps, args[0]!);
    show(opts, { ...app, deleted: true }, () => `management client "${app.name}" is deleted`);
  });
}
