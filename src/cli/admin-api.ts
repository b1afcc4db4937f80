// What `gateway admin` does to developers, apps, keys and tokens, written once: on the store the
// config names (src/admin, as the portal does), or, with --url, over the management API. Both give
// back the same objects, so every command prints the same whichever way it went.
import { invitationLink, inviteDeveloper } from '../admin/accounts.ts';
import { approveApp, createApp, deleteApp, findApp, listApps, revokeKey, rotateKey, setAppStatus, setRedirectUris, type AppDetails, type AppRef, type NewAppInput } from '../admin/apps.ts';
import { setCertificateAuth, type CertificateAuthInput } from '../admin/app-certificates.ts';
import type { OperatorDeps } from '../admin/deps.ts';
import { createDeveloper, deleteDeveloper, listDevelopers, requireDeveloper, setDeveloperStatus } from '../admin/developers.ts';
import { AdminError } from '../admin/errors.ts';
import { importKey, revokeTokens } from '../admin/keys.ts';
import { listSigningKeys, revokeSigningKeyByKid, rotateSigningKeys } from '../admin/signing-keys.ts';
import { usageReport, type UsageQuery, type UsageRow } from '../admin/usage.ts';
import type { SigningSettings } from '../config/types.ts';
import type { SigningKeyView } from '../oauth/signing/key-ring.ts';
import { StoreUnavailable, type App, type Credential, type Developer } from '../store/port/index.ts';
import { CliError } from './io.ts';

/** A registered app with its key and secret (shown once; a public app has none), as `apps create --json` prints it. */
export type CreatedView = App & { key: string; secret?: string };
/** A rotation: the app, its new key and secret (a public app: none), and until when the earlier keys work. */
export type RotatedView = App & { key: string; secret?: string; overlapUntil: number };
export interface InvitationView {
  email: string;
  code: string;
  expiresAt: number;
  link?: string;
}
export interface ProductView {
  name: string;
  grants: readonly string[];
}
export type TokensTarget = { app: AppRef } | { subject: string };

export interface AdminApi {
  createDeveloper(input: { email: string; name: string }): Promise<Developer>;
  listDevelopers(): Promise<Developer[]>;
  getDeveloper(email: string): Promise<Developer>;
  setDeveloperStatus(email: string, status: Developer['status']): Promise<Developer>;
  deleteDeveloper(email: string): Promise<Developer>;
  inviteDeveloper(email: string, validDays: number): Promise<InvitationView>;
  createApp(input: NewAppInput): Promise<CreatedView>;
  listApps(filter?: { developer?: string }): Promise<AppDetails[]>;
  findApp(ref: AppRef): Promise<AppDetails>;
  setAppStatus(ref: AppRef, status: App['status']): Promise<AppDetails>;
  approveApp(ref: AppRef): Promise<AppDetails>;
  setRedirectUris(ref: AppRef, uris: readonly string[]): Promise<AppDetails>;
  setCertificateAuth(ref: AppRef, input: CertificateAuthInput): Promise<AppDetails>;
  deleteApp(ref: AppRef): Promise<App>;
  rotateKey(ref: AppRef): Promise<RotatedView>;
  revokeKey(key: string): Promise<void>;
  importKey(ref: AppRef, input: { key: string; secret: string }): Promise<Credential>;
  revokeTokens(target: TokensTarget): Promise<{ revoked: number }>;
  /** The API products the gateway declares, with their grants; undefined when the caller may not read them. */
  products(): Promise<readonly ProductView[] | undefined>;
  /** The gateway's signing keys (JWT access tokens, upstream identities). */
  listSigningKeys(): Promise<SigningKeyView[]>;
  rotateSigningKeys(): Promise<SigningKeyView>;
  revokeSigningKey(kid: string): Promise<{ kid: string; replacement: string | null }>;
  /** Calls per app, product, route and status class per hour (src/admin/usage.ts). */
  usage(query: UsageQuery): Promise<UsageRow[]>;
}

const DAY_MS = 86_400_000;

/** The operations on the store the config names. */
export function localApi(deps: OperatorDeps): AdminApi {
  return {
    createDeveloper: (input) => createDeveloper(deps, input),
    listDevelopers: () => listDevelopers(deps),
    getDeveloper: (email) => requireDeveloper(deps, email),
    setDeveloperStatus: (email, status) => setDeveloperStatus(deps, email, status),
    deleteDeveloper: (email) => deleteDeveloper(deps, email),
    async inviteDeveloper(email, validDays) {
      const invite = await inviteDeveloper(deps, email, validDays * DAY_MS);
      const link = invitationLink(deps.portal, invite.developer.email, invite.code);
      return { email: invite.developer.email, code: invite.code, expiresAt: invite.expiresAt, ...(link === undefined ? {} : { link }) };
    },
    async createApp(input) {
      const created = await createApp(deps, input);
      return { ...created.app, key: created.key, ...secretOf(created) };
    },
    listApps: (filter = {}) => listApps(deps, filter),
    findApp: (ref) => findApp(deps, ref),
    setAppStatus: (ref, status) => setAppStatus(deps, ref, status),
    approveApp: (ref) => approveApp(deps, ref),
    setRedirectUris: (ref, uris) => setRedirectUris(deps, ref, uris),
    setCertificateAuth: (ref, input) => setCertificateAuth(deps, ref, input),
    deleteApp: (ref) => deleteApp(deps, ref),
    async rotateKey(ref) {
      const rotated = await rotateKey(deps, ref);
      return { ...rotated.app, key: rotated.key, ...secretOf(rotated), overlapUntil: rotated.overlapUntil };
    },
    revokeKey: (key) => revokeKey(deps, key),
    importKey: (ref, input) => importKey(deps, ref, input),
    revokeTokens: (target) => revokeTokens(deps, target),
    products: async () => [...deps.products.values()].map((p) => ({ name: p.name, grants: [...p.grants] })),
    listSigningKeys: () => listSigningKeys(deps, signingOf(deps)),
    rotateSigningKeys: () => rotateSigningKeys(deps, signingOf(deps)),
    revokeSigningKey: (kid) => revokeSigningKeyByKid(deps, signingOf(deps), kid),
    usage: (query) => usageReport(deps, query),
  };
}

/** As the management API's JSON has it: a public app's answer holds no `secret`. */
const secretOf = (made: { secret: string | undefined }): { secret?: string } => (made.secret === undefined ? {} : { secret: made.secret });

function signingOf(deps: OperatorDeps): SigningSettings {
  if (deps.signing === undefined) throw new TypeError("the signing key operations need the config's oauth.signing");
  return deps.signing;
}

const NO_REMOTE_SIGNING_KEYS = () => Promise.reject(new CliError('signing keys are managed on the store the config names: run this command without --url (and without GATEWAY_MANAGEMENT_URL)'));

/** A management client's credentials, from the environment. */
export interface RemoteCredentials {
  key: string;
  secret: string;
}

/** Calls of the management API at `base` as the client with `credentials`: one token per command, its answers as JSON, every page of a list. */
function managementClient(base: string, credentials: RemoteCredentials) {
  const origin = base.replace(/\/+$/, '');
  let token: Promise<string> | undefined;

  async function send(method: string, path: string, headers: Record<string, string>, payload?: string): Promise<Response> {
    try {
      return await fetch(`${origin}${path}`, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      throw new CliError(`cannot reach the management API at ${origin}: ${cause}`);
    }
  }

  async function fetchToken(): Promise<string> {
    const basic = Buffer.from(`${encodeURIComponent(credentials.key)}:${encodeURIComponent(credentials.secret)}`).toString('base64');
    const res = await send('POST', '/oauth2/token', { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials');
    const answer = (await res.json().catch(() => ({}))) as { access_token?: string; error?: string; error_description?: string };
    if (res.status !== 200 || typeof answer.access_token !== 'string') {
      throw new CliError(`the management API refused the client in GATEWAY_MANAGEMENT_KEY: ${answer.error_description ?? answer.error ?? `status ${res.status}`}`);
    }
    return answer.access_token;
  }

  /**
   * A call with the command's token. A token that expired during a long command (an `apply` of
   * many apps) is renewed once: a 401 comes before the operation runs, so the retry is safe.
   */
  async function authorized(method: string, path: string, body?: unknown): Promise<Response> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = (bearer: string): Record<string, string> => ({ authorization: `Bearer ${bearer}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) });
    const fresh = token === undefined;
    token ??= fetchToken();
    const res = await send(method, path, headers(await token), payload);
    if (res.status !== 401 || fresh) return res;
    await res.body?.cancel();
    token = fetchToken();
    return send(method, path, headers(await token), payload);
  }

  /** The answer's JSON; a problem becomes the AdminError (or store outage) the local operation would have thrown. */
  async function json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await authorized(method, `/v1${path}`, body);
    if (res.status === 204) return undefined as T;
    const answer = (await res.json().catch(() => undefined)) as { code?: string; detail?: string } | undefined;
    if (res.ok) return answer as T;
    if (res.status === 503) throw new StoreUnavailable(answer?.detail ?? 'the management API is unavailable');
    const detail = answer?.detail ?? `the management API answered ${res.status}`;
    // RFC 6750 §3: the challenge names the scope the operation needs; say which client lacks it.
    const scope = res.status === 403 ? /scope="([^"]*)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1] : undefined;
    throw new AdminError(answer?.code ?? 'refused', scope === undefined ? detail : `${detail}: the management client in GATEWAY_MANAGEMENT_KEY needs ${scope}`);
  }

  async function all<T>(path: string): Promise<T[]> {
    const items: T[] = [];
    let next: string | null = null;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const page: { items: T[]; next: string | null } = await json('GET', `${path}${sep}limit=500${next === null ? '' : `&cursor=${next}`}`);
      items.push(...page.items);
      next = page.next;
    } while (next !== null);
    return items;
  }

  return { json, all };
}

/** The operations over the management API at `base`, as the client with `credentials`. */
export function remoteApi(base: string, credentials: RemoteCredentials): AdminApi {
  const { json, all } = managementClient(base, credentials);
  const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
  const seg = encodeURIComponent;

  async function appId(ref: AppRef): Promise<string> {
    if ('id' in ref) return ref.id;
    const found = await all<AppDetails>(`/apps?${q('key' in ref ? { key: ref.key } : { developer: ref.developer, name: ref.name })}`);
    if (found[0] === undefined) throw new AdminError('unknown_app', 'key' in ref ? `no app with key ${ref.key}` : `developer ${ref.developer} has no app "${ref.name}"`);
    return found[0].id;
  }

  return {
    createDeveloper: (input) => json('POST', '/developers', input),
    listDevelopers: () => all('/developers'),
    getDeveloper: (email) => json('GET', `/developers/${seg(email)}`),
    setDeveloperStatus: (email, status) => json('PATCH', `/developers/${seg(email)}`, { status }),
    async deleteDeveloper(email) {
      const dev = await json<Developer>('GET', `/developers/${seg(email)}`);
      await json('DELETE', `/developers/${seg(dev.id)}`);
      return dev;
    },
    inviteDeveloper: (email, validDays) => json('POST', `/developers/${seg(email)}/invitations`, { validDays }),
    createApp: (input) => json('POST', '/apps', input),
    listApps: (filter = {}) => all(filter.developer === undefined ? '/apps' : `/apps?${q({ developer: filter.developer })}`),
    findApp: async (ref) => json('GET', `/apps/${seg(await appId(ref))}`),
    setAppStatus: async (ref, status) => json('PATCH', `/apps/${seg(await appId(ref))}`, { status }),
    approveApp: async (ref) => json('PATCH', `/apps/${seg(await appId(ref))}`, { approval: 'approved' }),
    setRedirectUris: async (ref, uris) => json('PATCH', `/apps/${seg(await appId(ref))}`, { redirectUris: uris }),
    setCertificateAuth: async (ref, input) => json('PATCH', `/apps/${seg(await appId(ref))}`, { certificateAuth: input }),
    async deleteApp(ref) {
      const id = await appId(ref);
      const app = await json<AppDetails>('GET', `/apps/${seg(id)}`);
      await json('DELETE', `/apps/${seg(id)}`);
      return app;
    },
    rotateKey: async (ref) => json('POST', `/apps/${seg(await appId(ref))}/keys`),
    async revokeKey(key) {
      await json('POST', `/apps/${seg(await appId({ key }).catch(unknownKey(key)))}/keys/${seg(key)}/revoke`);
    },
    importKey: async (ref, input) => json('POST', `/apps/${seg(await appId(ref))}/keys/import`, input),
    revokeTokens: async (target) => json('POST', '/tokens/revoke', 'subject' in target ? { subject: target.subject } : { app: await appId(target.app) }),
    // A client without products:read can still apply: the API then refuses an unknown product itself.
    products: () =>
      all<ProductView>('/products').then(
        (products) => products.map((p) => ({ name: p.name, grants: p.grants })),
        (err: unknown) => {
          if (err instanceof AdminError && err.code === 'insufficient_scope') return undefined;
          throw err;
        },
      ),
    listSigningKeys: NO_REMOTE_SIGNING_KEYS,
    rotateSigningKeys: NO_REMOTE_SIGNING_KEYS,
    revokeSigningKey: NO_REMOTE_SIGNING_KEYS,
    usage: (query) =>
      all(
        `/usage?${q({
          from: new Date(query.from).toISOString(),
          to: new Date(query.to).toISOString(),
          ...(query.app === undefined ? {} : { app: query.app }),
          ...(query.product === undefined ? {} : { product: query.product }),
          ...(query.route === undefined ? {} : { route: query.route }),
        })}`,
      ),
  };
}

/** A key no app holds is an unknown key, as the local revoke says. */
const unknownKey = (key: string) => (err: unknown) => {
  throw err instanceof AdminError && err.code === 'unknown_app' ? new AdminError('unknown_key', `no key ${key}`) : err;
};
