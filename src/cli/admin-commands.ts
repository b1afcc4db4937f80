// The commands of `gateway admin` on developers, apps, keys and tokens, each written once against
// AdminApi (./admin-api.ts): the store the config names, or with --url the management API.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { AppDetails, AppRef } from '../admin/apps.ts';
import { requireClientType } from '../admin/app-rules.ts';
import type { CertificateAuthInput } from '../admin/app-certificates.ts';
import { AdminError } from '../admin/errors.ts';
import { isLive, type App, type Developer } from '../store/port/index.ts';
import type { Common, Leaves } from './admin.ts';
import type { SigningKeyView } from '../oauth/signing/key-ring.ts';
import { CliError, isoDate, table, type CliIo } from './io.ts';

// VERIFIED "no": an open sign-up that has not confirmed its address (`developers create` or `invite` replaces it).
const devRow = (d: Developer) => ({ email: d.email, name: d.name, status: d.status, verified: d.verified ? 'yes' : 'no', created: isoDate(d.createdAt) });
// A pending app (registered in the portal, not yet approved) shows as such until it is approved.
const appStatus = (a: App) => (a.status === 'active' && a.approval === 'pending' ? 'pending' : a.status);
const appRow = (a: App) => ({ developer: a.developerEmail, name: a.name, product: a.product, type: a.type, status: appStatus(a), created: isoDate(a.createdAt) });
const APP_COLUMNS = ['developer', 'name', 'product', 'type', 'status', 'created'];
/** commander's way of a repeatable option: each one adds to the list. */
const collect = (value: string, list: string[] = []): string[] => [...list, value];
/** The lines that name a new key's secret, or say that a public app has none. */
const secretLines = (made: { secret?: string }, after: string): string[] =>
  made.secret === undefined ? ['public app: no secret'] : [`secret: ${made.secret}`, `${after}The secret is shown only now; store it safely.`];
const appRef = (args: string[], opts: { developer?: string; name?: string }): AppRef => {
  if (args[0] !== undefined) return { key: args[0] };
  if (opts.developer !== undefined && opts.name !== undefined) return { developer: opts.developer, name: opts.name };
  throw new AdminError('usage', 'name the app by its key, or by --developer and --name');
};
/** The options of a command that names an app by --developer and --name instead of its key. */
const byName = (cmd: Command) => cmd.option('--developer <email>', "the developer's email").option('--name <name>', 'app name');

export function registerDevelopers(admin: Command, { leaf, show }: Leaves): void {
  const developers = admin.command('developers').description('developer accounts');
  leaf<Common & { email: string; name: string }>(developers, 'create', 'create a developer', async (api, opts) => {
    const dev = await api.createDeveloper({ email: opts.email, name: opts.name });
    show(opts, dev, () => `created developer ${dev.email}`);
  })
    .requiredOption('--email <email>', 'email address (unique)')
    .requiredOption('--name <name>', 'display name');
  leaf<Common & { valid: string }>(developers, 'invite <email>', 'a one-time code with which the developer sets a portal password (7 days; replaces an earlier one)', async (api, opts, args) => {
    const days = Number(opts.valid);
    if (!Number.isInteger(days) || days < 1 || days > 90) throw new AdminError('usage', '--valid: a number of days from 1 to 90');
    const invite = await api.inviteDeveloper(args[0]!, days);
    show(opts, invite, () =>
      [
        `invitation for ${invite.email}, valid until ${isoDate(invite.expiresAt)}:`,
        `code: ${invite.code}`,
        ...(invite.link === undefined ? [] : [`link: ${invite.link}`]),
        'The code is shown only now. The developer enters it at sign-up in the portal to set a password.',
      ].join('\n'),
    );
  }).option('--valid <days>', 'days the code works', '7');
  leaf(developers, 'list', 'list developers', async (api, opts) => {
    const list = await api.listDevelopers();
    show(opts, list, () => table(list.map(devRow), ['email', 'name', 'status', 'verified', 'created']));
  });
  leaf(developers, 'show <email>', 'show a developer', async (api, opts, args) => {
    const dev = await api.getDeveloper(args[0]!);
    show(opts, dev, () => table([devRow(dev)], ['email', 'name', 'status', 'verified', 'created']));
  });
  leaf(developers, 'delete <email>', 'delete a developer with their apps and keys: their tokens stop working at once', async (api, opts, args) => {
    const dev = await api.deleteDeveloper(args[0]!);
    show(opts, { ...dev, deleted: true }, () => `developer ${dev.email} is deleted, with their apps and keys`);
  });
  for (const [verb, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    leaf(developers, `${verb} <email>`, `${verb} a developer${verb === 'disable' ? ': no new tokens, and their tokens stop working' : ''}`, async (api, opts, args) => {
      const dev = await api.setDeveloperStatus(args[0]!, status);
      show(opts, dev, () => `developer ${dev.email} is ${dev.status}`);
    });
  }
}

export function registerApps(admin: Command, { leaf, show }: Leaves): void {
  const apps = admin.command('apps').description('developer apps');
  leaf<Common & { developer: string; name: string; product: string; type?: string; redirectUri?: string[] }>(
    apps,
    'create',
    'register an app; prints its key and, for a confidential app, its secret once',
    async (api, opts) => {
      const created = await api.createApp({
        developer: opts.developer,
        name: opts.name,
        product: opts.product,
        type: opts.type === undefined ? undefined : requireClientType(opts.type),
        redirectUris: opts.redirectUri ?? [],
      });
      show(opts, created, () =>
        [
          `created ${created.type} app "${created.name}" for ${created.developerEmail}, API product ${created.product}`,
          `key:    ${created.key}`,
          ...secretLines(created, ''),
          ...created.redirectUris.map((uri) => `redirect URI: ${uri}`),
        ].join('\n'),
      );
    },
  )
    .requiredOption('--developer <email>', "the developer's email")
    .requiredOption('--name <name>', 'app name (unique per developer)')
    .requiredOption('--product <product>', 'API product')
    .option('--type <type>', 'confidential (a key and a secret: a server) or public (a key only: a single-page, mobile or command-line app)', 'confidential')
    .option('--redirect-uri <uri>', 'where users are sent back after signing in (products with the authorization_code grant); repeat for more', collect);
  leaf<Common & { developer?: string }>(apps, 'list', 'list apps', async (api, opts) => {
    const list = await api.listApps(opts.developer === undefined ? {} : { developer: opts.developer });
    const now = Date.now();
    // Keys that authenticate: the current one, and earlier ones until their overlap ends.
    const keys = (app: AppDetails) =>
      app.credentials
        .filter((c) => isLive(c, now))
        .map((c) => (c.expiresAt === null ? c.key : `${c.key} (until ${isoDate(c.expiresAt)})`))
        .join(', ');
    show(opts, list, () =>
      table(
        list.map((app) => ({ ...appRow(app), keys: keys(app) })),
        [...APP_COLUMNS, 'keys'],
      ),
    );
  }).option('--developer <email>', "only this developer's apps");
  byName(
    leaf<Common & { developer?: string; name?: string }>(apps, 'show [key]', 'show an app and its keys (never the secrets)', async (api, opts, args) => {
      const app = await api.findApp(appRef(args, opts));
      show(opts, app, () =>
        [
          table([appRow(app)], APP_COLUMNS),
          ...(app.redirectUris.length === 0 ? [] : ['', ...app.redirectUris.map((uri) => `redirect URI: ${uri}`)]),
          ...(app.certificateAuth === undefined ? [] : ['', ...certificateLines(app)]),
          '',
          table(
            app.credentials.map((c) => ({ key: c.key, status: c.status, created: isoDate(c.createdAt), expires: isoDate(c.expiresAt) })),
            ['key', 'status', 'created', 'expires'],
          ),
        ].join('\n'),
      );
    }),
  );
  registerAppChanges(apps, { leaf, show });
}

/** The commands that change an app: disable, enable, approve, redirect-uris, delete. */
function registerAppChanges(apps: Command, { leaf, show }: Pick<Leaves, 'leaf' | 'show'>): void {
  for (const [verb, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    byName(
      leaf<Common & { developer?: string; name?: string }>(
        apps,
        `${verb} [key]`,
        `${verb} an app${verb === 'disable' ? ': no new tokens, and its tokens stop working' : ''}`,
        async (api, opts, args) => {
          const app = await api.setAppStatus(appRef(args, opts), status);
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
      async (api, opts, args) => {
        const app = await api.approveApp(appRef(args, opts));
        show(opts, app, () => `app "${app.name}" of ${app.developerEmail} is approved${app.status === 'disabled' ? ' (and still disabled)' : ''}`);
      },
    ),
  );
  byName(
    leaf<Common & { developer?: string; name?: string; set?: string[]; none?: boolean }>(
      apps,
      'redirect-uris [key]',
      "replace the app's redirect URIs with those given by --set (repeat it for each), or with none (--none)",
      async (api, opts, args) => {
        if ((opts.set === undefined) === (opts.none !== true)) throw new AdminError('usage', 'give the redirect URIs with --set <uri> (repeat it for each), or --none');
        const app = await api.setRedirectUris(appRef(args, opts), opts.set ?? []);
        show(opts, app, () =>
          app.redirectUris.length === 0
            ? `app "${app.name}" of ${app.developerEmail} has no redirect URIs`
            : [`redirect URIs of app "${app.name}" of ${app.developerEmail}:`, ...app.redirectUris].join('\n'),
        );
      },
    )
      .option('--set <uri>', 'a redirect URI; repeat for more (the list replaces the old one)', collect)
      .option('--none', 'no redirect URIs at all'),
  );
  byName(
    leaf<Common & CertificateOptions>(
      apps,
      'certificate [key]',
      'how the app authenticates at the token endpoint with a client certificate (RFC 8705), instead of its secret: --pem or --thumbprint (self-signed), --subject-dn or --san-* (signed by listen.tls.clientCa), or --none',
      async (api, opts, args) => {
        const app = await api.setCertificateAuth(appRef(args, opts), certificateInput(opts));
        show(opts, app, () => certificateLines(app).join('\n'));
      },
    )
      .option('--pem <file>', 'a PEM file of a certificate the app presents (self_signed_tls_client_auth); repeat for more (up to 4)', collect)
      .option('--thumbprint <sha256>', "a certificate's SHA-256 thumbprint instead of the certificate; repeat for more", collect)
      .option('--subject-dn <dn>', 'tls_client_auth: the subject DN, as CN=client,O=Example,C=US')
      .option('--san-dns <name>', 'tls_client_auth: a DNS subjectAltName')
      .option('--san-uri <uri>', 'tls_client_auth: a URI subjectAltName (a SPIFFE ID)')
      .option('--san-ip <address>', 'tls_client_auth: an IP address subjectAltName')
      .option('--san-email <address>', 'tls_client_auth: an email subjectAltName')
      .option('--none', 'no certificate: the app authenticates with its secret again'),
  );
  byName(
    leaf<Common & { developer?: string; name?: string }>(apps, 'delete [key]', 'delete an app and its keys: its tokens stop working at once', async (api, opts, args) => {
      const app = await api.deleteApp(appRef(args, opts));
      show(opts, { ...app, deleted: true }, () => `app "${app.name}" of ${app.developerEmail} is deleted`);
    }),
  );
}

interface CertificateOptions {
  developer?: string;
  name?: string;
  pem?: string[];
  thumbprint?: string[];
  subjectDn?: string;
  sanDns?: string;
  sanUri?: string;
  sanIp?: string;
  sanEmail?: string;
  none?: boolean;
}

/** The one registration the options ask for. */
function certificateInput(opts: CertificateOptions): CertificateAuthInput {
  const selfSigned = [...(opts.pem ?? []).map(readPem), ...(opts.thumbprint ?? [])];
  const given = { dns: opts.sanDns, uri: opts.sanUri, ip: opts.sanIp, email: opts.sanEmail };
  const sans = (['dns', 'uri', 'ip', 'email'] as const).flatMap((san) => {
    const value = given[san];
    return value === undefined ? [] : [{ method: 'tls_client_auth' as const, san, value }];
  });
  const asked: CertificateAuthInput[] = [
    ...(selfSigned.length > 0 ? [{ method: 'self_signed_tls_client_auth' as const, certificates: selfSigned }] : []),
    ...(opts.subjectDn === undefined ? [] : [{ method: 'tls_client_auth' as const, subjectDn: opts.subjectDn }]),
    ...sans,
    ...(opts.none === true ? [{ method: 'none' as const }] : []),
  ];
  if (asked.length !== 1) throw new AdminError('usage', 'give one of: --pem/--thumbprint (repeatable), --subject-dn, one --san-*, or --none');
  return asked[0]!;
}

function readPem(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** What the app's certificate registration says, for people. */
function certificateLines(app: App): string[] {
  const auth = app.certificateAuth;
  const of = `app "${app.name}" of ${app.developerEmail}`;
  if (auth === undefined) return [`${of} authenticates with its secret (no client certificate)`];
  if (auth.method === 'tls_client_auth') {
    const subject = 'dn' in auth.subject ? `subject DN ${auth.subject.dn}` : `subjectAltName ${auth.subject.san.toUpperCase()}:${auth.subject.value}`;
    return [`${of} authenticates with a client certificate of the CA, ${subject} (tls_client_auth); its secret no longer does`];
  }
  return [
    `${of} authenticates with one of these self-signed certificates (self_signed_tls_client_auth); its secret no longer does:`,
    table(
      auth.certificates.map((c) => ({ thumbprint: c.thumbprint, expires: c.expiresAt === null ? '-' : isoDate(c.expiresAt), subject: c.subject || '-' })),
      ['thumbprint', 'expires', 'subject'],
    ),
  ];
}

const signingKeyRow = (k: SigningKeyView) => ({
  kid: k.kid,
  algorithm: k.algorithm,
  status: k.status,
  created: isoDate(k.createdAt),
  signs: isoDate(k.activatesAt),
  retires: isoDate(k.retiresAt),
  unpublished: isoDate(k.unpublishedAt),
});
const SIGNING_KEY_COLUMNS = ['kid', 'algorithm', 'status', 'created', 'signs', 'retires', 'unpublished'];

/** A signing key's id, which no app key can be (an app key has no '_'). */
const isKid = (arg: string | undefined) => arg?.startsWith('gwk_') === true;

export function registerKeys(admin: Command, { leaf, show }: Leaves, io: CliIo): void {
  const keys = admin.command('keys').description("the gateway's signing keys (JWT access tokens, upstream identities), and app keys (client credentials)");
  leaf(keys, 'list', "the gateway's signing keys: which signs now, which is next, which are retired and until when the JWKS publishes them", async (api, opts) => {
    const list = await api.listSigningKeys();
    show(opts, list, () => (list.length === 0 ? 'no signing keys yet: a gateway makes the first when a product issues JWTs' : table(list.map(signingKeyRow), SIGNING_KEY_COLUMNS)));
  });
  byName(
    leaf<Common & { developer?: string; name?: string }>(
      keys,
      'rotate [key]',
      "without arguments: a new signing key, in the JWKS now, signing after publishAhead; with an app's key (or --developer and --name): give the app a new key and secret, its earlier keys working until the portal's keyOverlap ends",
      async (api, opts, args) => {
        if (args[0] === undefined && opts.developer === undefined && opts.name === undefined) {
          const added = await api.rotateSigningKeys();
          show(opts, added, () => `new signing key ${added.kid} (${added.algorithm}): in the JWKS now, signing from ${isoDate(added.activatesAt)}`);
          return;
        }
        const rotated = await api.rotateKey(appRef(args, opts));
        show(opts, rotated, () =>
          [
            `new key for app "${rotated.name}" of ${rotated.developerEmail}`,
            `key:    ${rotated.key}`,
            ...secretLines(rotated, `The earlier keys work until ${isoDate(rotated.overlapUntil)}. `),
            ...(rotated.secret === undefined ? [`The earlier keys work until ${isoDate(rotated.overlapUntil)}.`] : []),
          ].join('\n'),
        );
      },
    ),
  );
  byName(
    leaf<Common & { developer?: string; name?: string; key: string; secretFile?: string; secretStdin?: boolean }>(
      keys,
      'import [appkey]',
      'register a key and secret made by another gateway (Apigee, Kong) for an app; the client keeps working unchanged',
      async (api, opts, args) => {
        const secret = importedSecret(opts, io);
        const credential = await api.importKey(appRef(args, opts), { key: opts.key, secret });
        show(opts, credential, () => `imported key ${credential.key}; its secret is stored hashed and is not shown again`);
      },
    )
      .requiredOption('--key <key>', 'the key (client id) the other gateway issued')
      .option('--secret-file <file>', 'a file holding its secret (one line)')
      .option('--secret-stdin', 'read its secret from standard input'),
  );
  leaf(
    keys,
    'revoke <key>',
    'revoke a signing key (gwk_…: out of the JWKS, every token it signed refused) or an app key (no new tokens with it, and its tokens stop working)',
    async (api, opts, args) => {
      if (isKid(args[0])) {
        const revoked = await api.revokeSigningKey(args[0]!);
        show(opts, { ...revoked, status: 'revoked' }, () =>
          [
            `signing key ${revoked.kid} is revoked: out of the JWKS, and every token it signed is refused`,
            ...(revoked.replacement === null ? [] : [`signing key ${revoked.replacement} signs from now on`]),
          ].join('\n'),
        );
        return;
      }
      await api.revokeKey(args[0]!);
      show(opts, { key: args[0], status: 'revoked' }, () => `key ${args[0]} is revoked`);
    },
  );
}

/** The imported secret, from a file or standard input: never from the command line, which every user of the machine can read. */
function importedSecret(opts: { secretFile?: string; secretStdin?: boolean }, io: CliIo): string {
  if ((opts.secretFile === undefined) === (opts.secretStdin !== true)) throw new CliError('give the secret with --secret-file <file> or --secret-stdin (one of them)');
  const text = opts.secretFile !== undefined ? readFileSync(opts.secretFile, 'utf8') : (io.stdin?.() ?? readFileSync(0, 'utf8'));
  // One line: the newline an editor or `echo` adds is not part of it.
  return text.replace(/\r?\n$/, '');
}

export function registerTokens(admin: Command, { leaf, show }: Leaves): void {
  const tokens = admin.command('tokens').description('access and refresh tokens');
  leaf<Common & { app?: string; developer?: string; name?: string; subject?: string }>(
    tokens,
    'revoke',
    'revoke every token of an app (its keys stay), or of a user across every app (log out everywhere)',
    async (api, opts) => {
      const target = tokensTarget(opts);
      const { revoked } = await api.revokeTokens(target);
      show(opts, { revoked }, () => `revoked ${revoked} token${revoked === 1 ? '' : 's'}`);
    },
  )
    .option('--app <key>', 'the app holding this key')
    .option('--developer <email>', "the app's developer (with --name)")
    .option('--name <name>', 'the app name (with --developer)')
    .option('--subject <subject>', "a user's subject, as the authorization server names it: every token issued for them");
}

function tokensTarget(opts: { app?: string; developer?: string; name?: string; subject?: string }): { app: AppRef } | { subject: string } {
  const byApp = opts.app !== undefined || opts.developer !== undefined || opts.name !== undefined;
  if (byApp === (opts.subject !== undefined)) throw new AdminError('usage', 'name an app (--app <key>, or --developer and --name) or a user (--subject), one of them');
  if (opts.subject !== undefined) return { subject: opts.subject };
  if (opts.app !== undefined) return { app: { key: opts.app } };
  if (opts.developer === undefined || opts.name === undefined) throw new AdminError('usage', 'name the app by --app <key>, or by --developer and --name');
  return { app: { developer: opts.developer, name: opts.name } };
}
