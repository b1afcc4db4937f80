// The management API's listener: the operations of its OpenAPI document (./document.ts) compiled
// into the gateway's own route table, so that each call goes through the steps every protected
// call does (the bearer token, the management product and the operation's scope, the document's
// request validation), then its operation answers in process. The listener also serves the token
// endpoint for management clients and the document at /openapi.json. Never the public listener.
import { readFileSync } from 'node:fs';
import { audit } from '../admin/audit.ts';
import type { OperatorDeps } from '../admin/deps.ts';
import { MANAGEMENT_PRODUCT, MANAGEMENT_SCOPES } from '../admin/management-clients.ts';
import type { Config, ManagementSettings, ProductSettings, RouteSettings } from '../config/load.ts';
import { GatewayError } from '../errors.ts';
import { createClientIp } from '../http/ip.ts';
import { listen, type Listener } from '../http/listener.ts';
import { NOSNIFF } from '../http/problem.ts';
import { createTokenEndpoint } from '../oauth/token.ts';
import { createSenderChecks } from '../oauth/senders.ts';
import { builtInDocument } from '../openapi/document.ts';
import { operationRoutes } from '../openapi/routes.ts';
import { Documents } from '../openapi/validators.ts';
import { answerHeaders, type RequestContext, type Step } from '../pipeline/context.ts';
import { createHandler, writesAccessLines } from '../runtime/handler.ts';
import { requestIdHeader } from '../runtime/oauth-routes.ts';
import { compileRoutes, type OwnPath } from '../runtime/routes.ts';
import type { Services } from '../services.ts';
import { appOperations } from './apps.ts';
import { asProblem, etagOf, type Call, type ManagementOperation, type Reply } from './call.ts';
import { catalogOperations } from './catalog.ts';
import { developerOperations } from './developers.ts';
import { managementDocument } from './document.ts';
import { createIdempotency, type Answer, type Idempotency } from './idempotency.ts';

export type ManagementServices = Pick<Services, 'store' | 'secretKey' | 'clock' | 'logger' | 'usage' | 'metrics' | 'passwords' | 'keys'>;

const operations: Readonly<Record<string, ManagementOperation>> = { ...developerOperations, ...appOperations, ...catalogOperations };

/** The built-in product whose apps are the management clients: client_credentials only, with the management scopes. */
export function managementProduct(settings: ManagementSettings): ProductSettings {
  return {
    name: MANAGEMENT_PRODUCT,
    displayName: 'Management API',
    description: 'Clients of the management API.',
    routes: [],
    scopes: Object.keys(MANAGEMENT_SCOPES),
    grants: new Set(['client_credentials']),
    authServer: undefined,
    accessTokenLifetime: settings.accessTokenLifetime,
    accessTokenFormat: 'opaque',
    audience: MANAGEMENT_PRODUCT,
    senderConstraint: 'none',
    upstreamIdentity: 'headers',
    refreshTokenLifetime: 0,
    refreshReuseGraceMs: 0,
    quota: undefined,
    rateLimitHeaders: true,
    visible: false,
    approval: 'auto',
    authorization: undefined,
  };
}

/** What the operations act with: src/admin's deps for the config serving now, as the calling management client. */
function depsOf(ctx: RequestContext, services: ManagementServices, config: Config): OperatorDeps {
  const token = ctx.token!;
  return {
    store: services.store,
    secretKey: services.secretKey,
    clock: services.clock,
    logger: services.logger,
    passwords: services.passwords,
    products: config.products,
    portal: config.portal,
    keyOverlapMs: config.keyOverlapMs,
    operator: { kind: 'management', client: token.key, name: token.appName },
  };
}

/** The path parameters of a route at `template`, percent-decoded. */
function paramsReader(template: string): (path: string) => Record<string, string> {
  const names = template.split('/').flatMap((segment, i) => (segment.startsWith('{') ? [[segment.slice(1, -1), i] as const] : []));
  return (path) => {
    const parts = path.split('/');
    const params: Record<string, string> = {};
    try {
      for (const [name, i] of names) params[name] = decodeURIComponent(parts[i] ?? '');
    } catch {
      throw new GatewayError(400, 'invalid_path', 'a path segment is not valid percent-encoded UTF-8');
    }
    return params;
  };
}

function render(reply: Reply): Answer {
  const headers: Record<string, string> = { ...reply.headers };
  if (reply.etag === true) headers.etag = etagOf(reply.body);
  return { status: reply.status, headers, payload: reply.body === undefined ? undefined : Buffer.from(JSON.stringify(reply.body)) };
}

function write(ctx: RequestContext, answer: Answer, replayed: boolean): void {
  const headers: Record<string, string | number> = answerHeaders(ctx, { ...answer.headers, ...NOSNIFF, 'cache-control': 'no-store' });
  if (replayed) headers['idempotent-replayed'] = 'true';
  if (answer.payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = answer.payload.length;
  }
  ctx.res.writeHead(answer.status, headers);
  ctx.res.end(answer.payload);
}

interface OperationEnv {
  services: ManagementServices;
  config: () => Config;
  idempotency: Idempotency;
}

/** The last step of an operation's route: call it, with the Idempotency-Key honoured on a create, and write its answer. */
function operationStep(route: RouteSettings, env: OperationEnv): Step {
  const operation = operations[route.name];
  if (operation === undefined) throw new TypeError(`the management API has no operation ${route.name}`);
  const paramsOf = paramsReader(route.path);
  // The creates: the operations whose document declares the header.
  const creates = route.operation?.operation.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key') === true;
  return async function manage(ctx: RequestContext): Promise<void> {
    const config = env.config();
    const call: Call = {
      ctx,
      params: paramsOf(ctx.path),
      query: new URLSearchParams(ctx.query),
      body: ctx.body === undefined || ctx.body.length === 0 ? undefined : JSON.parse(ctx.body.toString('utf8')),
      deps: depsOf(ctx, env.services, config),
      config: env.config,
      flushUsage: () => env.services.usage.flush(),
    };
    const run = () => operation(call).then(render, (err: unknown) => Promise.reject(asProblem(err)));
    const key = ctx.req.headers['idempotency-key'];
    if (creates && typeof key === 'string') {
      const { answer, replayed } = await env.idempotency.around(ctx, key, call.body, run);
      write(ctx, answer, replayed);
    } else {
      write(ctx, await run(), false);
    }
  };
}

/** GET /openapi.json: the document, to anyone who can reach the listener (it holds nothing secret). */
function documentPath(): OwnPath {
  const payload = Buffer.from(JSON.stringify(managementDocument));
  function serveDocument(ctx: RequestContext): void {
    if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw new GatewayError(405, 'method_not_allowed', 'method not allowed on this path', { headers: { allow: 'GET, HEAD' } });
    ctx.res.writeHead(200, answerHeaders(ctx, { ...NOSNIFF, 'content-type': 'application/json', 'content-length': payload.length, 'cache-control': 'no-cache' }));
    ctx.res.end(ctx.req.method === 'HEAD' ? undefined : payload);
  }
  return { route: { name: '/openapi.json', upstream: undefined, steps: [requestIdHeader, serveDocument] }, preflight: undefined };
}

/** The management listener's clients reach it directly: no proxy speaks for them. */
const UNPROXIED = { trustedProxies: [], publicHost: undefined, clientCertificateHeader: undefined, tls: undefined } as const;

/** The listener's request handler: the operations' routes, the token endpoint for management clients, and the document. */
export function createManagementHandler(config: Config, settings: ManagementSettings, services: ManagementServices, current: () => Config) {
  const document = builtInDocument('management-api.json', managementDocument);
  const problems: string[] = [];
  const declared = operationRoutes('management', { file: document.file, upstream: '' }, document, (_at, message) => problems.push(message));
  if (problems.length > 0) throw new TypeError(`the management API's document: ${problems.join('; ')}`);
  const routes = new Map<string, RouteSettings>(
    declared.map((r) => [
      r.name,
      {
        name: r.name,
        method: r.method,
        path: r.path,
        upstream: '',
        scopes: r.scopes,
        requireSubject: false,
        upstreamIdentity: undefined,
        rateLimitHeaders: true,
        products: new Set([MANAGEMENT_PRODUCT]),
        policies: [],
        operation: { api: 'management', operation: r.operation },
      },
    ]),
  );
  const product = managementProduct(settings);
  const env: OperationEnv = { services, config: current, idempotency: createIdempotency(services) };
  // A management client may bind its tokens to a DPoP key, as an app may; its listener asks for no certificate.
  const senders = createSenderChecks({ listen: UNPROXIED, dpop: config.oauth.dpop, issuer: undefined }, services);
  const token = createTokenEndpoint({
    store: services.store,
    secretKey: services.secretKey,
    clock: services.clock,
    logger: services.logger,
    realm: config.oauth.realm,
    products: new Map([[MANAGEMENT_PRODUCT, product]]),
    authServers: new Map(),
    // Management clients get opaque tokens.
    signing: { keys: services.keys, issuer: undefined },
    ...senders,
  });
  const ownPaths = new Map<string, OwnPath>([
    ['/oauth2/token', { route: { name: '/oauth2/token', upstream: undefined, steps: [requestIdHeader, token.step], surface: 'token', fail: token.fail }, preflight: undefined }],
    ['/openapi.json', documentPath()],
  ]);
  const table = compileRoutes(
    {
      routes,
      products: new Map([[MANAGEMENT_PRODUCT, product]]),
      upstreams: new Map(),
      listen: config.listen,
      openapi: new Map([['management', document]]),
      realm: config.oauth.realm,
      // Management clients hold opaque tokens, and the operations have no upstream to tell.
      issuer: undefined,
      signing: config.oauth.signing,
      configDir: '.',
      documents: new Documents(),
      compiled: { once: (_options, make) => make() },
      respond: (route) => operationStep(route, env),
    },
    { ...services, senders, tracing: undefined },
    ownPaths,
  );
  return createHandler({
    calls: { running: 0, idle: undefined },
    routes: table,
    // The listener's peer: whoever is in front of it is not trusted to say who called.
    clientIp: createClientIp([]),
    accessLog: writesAccessLines(config.log, services.logger),
    logger: services.logger,
    usage: services.usage,
    clock: services.clock,
    metrics: services.metrics,
    protocol: settings.tls === undefined ? 'http' : 'https',
    audit: (ctx, operation) => auditCall(services, ctx, operation),
    // The operators' own calls are neither traced nor billed.
    tracing: undefined,
    usageStream: undefined,
  });
}

/** Every call with a valid token writes a line naming the client, the operation and the answer's status. */
function auditCall(services: ManagementServices, ctx: RequestContext, operation: string): void {
  const token = ctx.token!;
  audit(services.logger, 'management.call', {
    actor: { kind: 'management', client: token.key, name: token.appName },
    operation,
    method: ctx.req.method ?? '',
    path: ctx.path,
    status: ctx.res.statusCode,
  });
}

/** Starts the management API's listener when the config has a `management` section. */
export async function startManagement(config: Config, services: ManagementServices, current: () => Config, port?: number): Promise<Listener | undefined> {
  const settings = config.management;
  if (settings === undefined) return undefined;
  const tls = settings.tls && { cert: readFileSync(settings.tls.cert), key: readFileSync(settings.tls.key) };
  const handler = createManagementHandler(config, settings, services, current);
  const listener = await listen(handler, settings.host, port ?? settings.port, {
    tls,
    timeouts: config.listen.timeouts,
    onError: (err) => services.logger.error({ err }, 'management request failed'),
  });
  services.logger.info({ url: listener.url }, 'management API listening');
  return listener;
}
