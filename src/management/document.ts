// The management API's OpenAPI 3.1 document: the one description of its operations, from which the
// listener's routes, their scopes and their request validation are compiled (./routes.ts), which
// it serves at /openapi.json, and from which docs/management-api.md is generated.
import { MANAGEMENT_SCOPES, type ManagementScope } from '../admin/management-clients.ts';
import { MAX_REDIRECT_URIS } from '../oauth/redirect-uris.ts';
import { LATENCY_BOUNDS_MS, LATENCY_BUCKETS } from '../store/port/index.ts';
import { CERTIFICATE_SCHEMAS } from './certificate-schemas.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const json = (schema: object) => ({ 'application/json': { schema } });
const problems = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/Problem${s}` }]));
const ok = (description: string, schema: object, headers?: object) => ({ description, content: json(schema), ...(headers && { headers }) });
const etag = { ETag: { description: 'The version of the resource, for If-Match.', schema: { type: 'string' } } };
const replayed = {
  'Idempotent-Replayed': { description: 'true when this is the answer of an earlier request with the same Idempotency-Key, without the secret that answer showed.', schema: { type: 'string' } },
};
const listOf = (item: string) => ({
  type: 'object',
  required: ['items', 'next'],
  additionalProperties: false,
  properties: { items: { type: 'array', items: ref(item) }, next: { type: ['string', 'null'], description: 'The cursor of the next page; null on the last.' } },
});
const body = (schema: object, required = true) => ({ required, content: json(schema) });

/** An operation: its tag, id, summary, the scope it needs, and the rest of its OpenAPI fields. */
function op(tag: string, operationId: string, summary: string, scope: ManagementScope, rest: Record<string, unknown>) {
  return { operationId, summary, tags: [tag], security: [{ management: [scope] }], ...rest };
}

const Timestamp = { type: 'integer', description: 'Epoch milliseconds.' };
const Name = { type: 'string', minLength: 1, maxLength: 100 };
const ClientType = {
  enum: ['confidential', 'public'],
  description: 'confidential: a key and a secret (a server); public: a key only (a single-page, mobile or command-line app, which cannot keep a secret).',
};
// The limits are src/admin's to check, so that its message (naming the URI) is the answer, as from the CLI.
const RedirectUris = { type: 'array', items: { type: 'string' }, description: `At most ${MAX_REDIRECT_URIS}, each at most 2000 characters.` };

const schemas = {
  Developer: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'email', 'name', 'status', 'verified', 'createdAt'],
    properties: {
      id: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      status: { enum: ['active', 'disabled'] },
      verified: { type: 'boolean', description: 'Whether the developer proved the address (an operator vouches for the ones they create).' },
      createdAt: Timestamp,
    },
  },
  NewDeveloper: { type: 'object', additionalProperties: false, required: ['email', 'name'], properties: { email: { type: 'string', maxLength: 254 }, name: Name } },
  DeveloperUpdate: { type: 'object', additionalProperties: false, minProperties: 1, properties: { status: { enum: ['active', 'disabled'] } } },
  InvitationRequest: { type: 'object', additionalProperties: false, properties: { validDays: { type: 'integer', minimum: 1, maximum: 90, default: 7 } } },
  Invitation: {
    type: 'object',
    additionalProperties: false,
    required: ['email', 'expiresAt'],
    properties: {
      email: { type: 'string' },
      code: { type: 'string', description: 'Shown once (not in a replay): the developer enters it at sign-up in the portal.' },
      expiresAt: Timestamp,
      link: { type: 'string', description: 'The sign-up page with the code filled in, when the config has a portal; shown once too.' },
    },
  },
  Credential: {
    type: 'object',
    additionalProperties: false,
    required: ['key', 'appId', 'status', 'expiresAt', 'createdAt'],
    properties: {
      key: { type: 'string', description: 'The client id.' },
      appId: { type: 'string' },
      status: { enum: ['approved', 'revoked'] },
      expiresAt: { type: ['integer', 'null'], description: 'Epoch milliseconds after which it stops working (a rotation’s overlap); null: no expiry.' },
      createdAt: Timestamp,
    },
  },
  AppFields: {
    type: 'object',
    required: ['id', 'developerId', 'developerEmail', 'name', 'product', 'status', 'approval', 'createdAt', 'type', 'redirectUris'],
    properties: {
      id: { type: 'string' },
      developerId: { type: 'string' },
      developerEmail: { type: 'string' },
      name: { type: 'string' },
      product: { type: 'string' },
      status: { enum: ['active', 'disabled'] },
      approval: { enum: ['approved', 'pending'] },
      createdAt: Timestamp,
      type: ClientType,
      redirectUris: { ...RedirectUris, description: 'Where the authorization endpoint may send users back, in the order registered.' },
      certificateAuth: ref('CertificateAuth'),
    },
  },
  ...CERTIFICATE_SCHEMAS,
  App: {
    allOf: [ref('AppFields'), { type: 'object', required: ['credentials'], properties: { credentials: { type: 'array', items: ref('Credential') } } }],
    unevaluatedProperties: false,
  },
  CreatedApp: {
    allOf: [
      ref('AppFields'),
      {
        type: 'object',
        required: ['key'],
        properties: { key: { type: 'string' }, secret: { type: 'string', description: 'Shown once (not in a replay): only its keyed hash is stored. A public app has none.' } },
      },
    ],
    unevaluatedProperties: false,
  },
  RotatedKey: {
    allOf: [
      ref('AppFields'),
      {
        type: 'object',
        required: ['key', 'overlapUntil'],
        properties: {
          key: { type: 'string' },
          secret: { type: 'string', description: 'Shown once (not in a replay). A public app has none.' },
          overlapUntil: { ...Timestamp, description: 'Until when the earlier keys work.' },
        },
      },
    ],
    unevaluatedProperties: false,
  },
  NewApp: {
    type: 'object',
    additionalProperties: false,
    required: ['developer', 'name', 'product'],
    properties: {
      developer: { type: 'string', description: "The developer's id or email." },
      name: Name,
      product: { type: 'string' },
      type: { ...ClientType, default: 'confidential' },
      redirectUris: {
        ...RedirectUris,
        description: `Required (at least one) for a product with the authorization_code grant, refused for any other: https, http on a loopback address, or a private-use scheme; no fragment; at most ${MAX_REDIRECT_URIS}.`,
      },
    },
  },
  AppUpdate: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      status: { enum: ['active', 'disabled'] },
      approval: { const: 'approved' },
      redirectUris: { ...RedirectUris, description: 'Replaces every redirect URI of the app, under the rules of registration.' },
      certificateAuth: ref('CertificateAuthInput'),
    },
  },
  KeyImport: {
    type: 'object',
    additionalProperties: false,
    required: ['key', 'secret'],
    properties: {
      key: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._~-]{7,254}$', description: 'The client id the other gateway issued.' },
      secret: { type: 'string', minLength: 16, maxLength: 512, description: 'Its secret: hashed at once, never stored, logged or returned.' },
    },
  },
  TokenRevocation: {
    oneOf: [
      { type: 'object', additionalProperties: false, required: ['app'], properties: { app: { type: 'string', description: "The app's id." } } },
      {
        type: 'object',
        additionalProperties: false,
        required: ['subject'],
        properties: { subject: { type: 'string', minLength: 1, maxLength: 255, description: "The user's subject, as the authorization server named it." } },
      },
    ],
  },
  Revoked: { type: 'object', additionalProperties: false, required: ['revoked'], properties: { revoked: { type: 'integer', description: 'How many tokens were revoked.' } } },
  Route: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'method', 'path', 'scopes'],
    properties: { name: { type: 'string' }, method: { type: 'string' }, path: { type: 'string' }, scopes: { type: 'array', items: { type: 'string' } } },
  },
  Product: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'displayName', 'description', 'scopes', 'grants', 'approval', 'visible', 'accessTokenLifetime', 'refreshTokenLifetime', 'routes'],
    properties: {
      name: { type: 'string' },
      displayName: { type: 'string' },
      description: { type: 'string' },
      scopes: { type: 'array', items: { type: 'string' } },
      grants: { type: 'array', items: { type: 'string' } },
      approval: { enum: ['auto', 'manual'] },
      visible: { type: 'boolean' },
      accessTokenLifetime: { type: 'integer', description: 'Seconds.' },
      refreshTokenLifetime: { type: 'integer', description: 'Seconds.' },
      routes: { type: 'array', items: ref('Route') },
    },
  },
  Usage: {
    type: 'object',
    additionalProperties: false,
    required: ['hour', 'app', 'product', 'route', 'statusClass', 'count', 'latency'],
    properties: {
      hour: { ...Timestamp, description: "Epoch milliseconds of the hour's start." },
      app: { type: 'string', description: "The app's id." },
      product: { type: 'string' },
      route: { type: 'string' },
      statusClass: { enum: ['1xx', '2xx', '3xx', '4xx', '5xx'] },
      count: { type: 'integer' },
      latency: {
        type: 'array',
        items: { type: 'integer', minimum: 0 },
        minItems: LATENCY_BUCKETS,
        maxItems: LATENCY_BUCKETS,
        description: `The calls by duration: how many took up to ${LATENCY_BOUNDS_MS.join(', ')} ms, each bound's bucket holding those above the bound before it, and the last those above ${LATENCY_BOUNDS_MS.at(-1)} ms. Calls counted before durations were are in none.`,
      },
    },
  },
  DeveloperList: listOf('Developer'),
  AppList: listOf('App'),
  CredentialList: listOf('Credential'),
  ProductList: listOf('Product'),
  UsageList: listOf('Usage'),
  Problem: {
    type: 'object',
    required: ['type', 'title', 'status', 'detail', 'code'],
    properties: {
      type: { type: 'string' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      code: { type: 'string', description: 'Stable and machine-readable: unknown_app, duplicate_developer, key_taken, insufficient_scope, precondition_failed…' },
      errors: { type: 'array', items: { type: 'object' }, description: 'Each validation failure, with where it was.' },
    },
  },
};

const PROBLEMS: Record<number, string> = {
  400: 'The request is malformed: the problem says what is wrong.',
  401: 'No valid access token (WWW-Authenticate says why).',
  403: 'The token is not a management client’s, or lacks the scope.',
  404: 'No such resource.',
  409: 'The request conflicts with what is there (a duplicate, a taken key, an Idempotency-Key in use).',
  412: 'If-Match names another version than the current one.',
  422: 'The Idempotency-Key was used for another request.',
  503: 'The store is unavailable; nothing was changed: try again.',
};

const paths = {
  '/developers': {
    get: op('Developers', 'listDevelopers', 'List developers, by email', 'developers:read', {
      parameters: [param('limit'), param('cursor')],
      responses: { '200': ok('A page of developers.', ref('DeveloperList')), ...problems(400, 401, 403) },
    }),
    post: op('Developers', 'createDeveloper', 'Create a developer (verified: the operator vouches for the address)', 'developers:write', {
      parameters: [param('idempotencyKey')],
      requestBody: body(ref('NewDeveloper')),
      responses: { '201': ok('The developer.', ref('Developer'), { ...etag, ...replayed }), ...problems(400, 401, 403, 409, 422) },
    }),
  },
  '/developers/{developer}': {
    parameters: [param('developer')],
    get: op('Developers', 'getDeveloper', 'Read a developer', 'developers:read', { responses: { '200': ok('The developer.', ref('Developer'), etag), ...problems(401, 403, 404) } }),
    patch: op('Developers', 'updateDeveloper', 'Disable or enable a developer: a disabled one’s tokens stop working at once', 'developers:write', {
      parameters: [param('ifMatch')],
      requestBody: body(ref('DeveloperUpdate')),
      responses: { '200': ok('The developer as it is now.', ref('Developer'), etag), ...problems(400, 401, 403, 404, 412) },
    }),
    delete: op('Developers', 'deleteDeveloper', 'Delete a developer with their apps, keys and tokens', 'developers:write', {
      parameters: [param('ifMatch')],
      responses: { '204': { description: 'Deleted.' }, ...problems(401, 403, 404, 412) },
    }),
  },
  '/developers/{developer}/invitations': {
    parameters: [param('developer')],
    post: op('Developers', 'inviteDeveloper', 'A one-time code with which the developer sets a portal password', 'developers:write', {
      parameters: [param('idempotencyKey')],
      requestBody: body(ref('InvitationRequest'), false),
      responses: { '201': ok('The invitation; its code is shown only now.', ref('Invitation'), replayed), ...problems(400, 401, 403, 404, 409, 422) },
    }),
  },
  '/apps': {
    get: op('Apps', 'listApps', 'List apps with their keys, by developer email and name', 'apps:read', {
      parameters: [
        { name: 'developer', in: 'query', description: "Only this developer's apps (id or email).", schema: { type: 'string' } },
        { name: 'product', in: 'query', description: 'Only the apps of this product.', schema: { type: 'string' } },
        { name: 'name', in: 'query', description: 'Only the apps of this name.', schema: { type: 'string' } },
        { name: 'key', in: 'query', description: 'Only the app holding this key.', schema: { type: 'string' } },
        param('limit'),
        param('cursor'),
      ],
      responses: { '200': ok('A page of apps.', ref('AppList')), ...problems(400, 401, 403, 404) },
    }),
    post: op('Apps', 'createApp', 'Register an app for a product: approved at once; its key and (unless public) secret are in the answer, once', 'apps:write', {
      parameters: [param('idempotencyKey')],
      requestBody: body(ref('NewApp')),
      responses: { '201': ok('The app with its key and secret.', ref('CreatedApp'), replayed), ...problems(400, 401, 403, 404, 409, 422) },
    }),
  },
  '/apps/{app}': {
    parameters: [param('app')],
    get: op('Apps', 'getApp', 'Read an app and its keys (never a secret)', 'apps:read', { responses: { '200': ok('The app.', ref('App'), etag), ...problems(401, 403, 404) } }),
    patch: op('Apps', 'updateApp', 'Approve, disable or enable an app (a disabled one’s tokens stop working at once), or replace its redirect URIs', 'apps:write', {
      parameters: [param('ifMatch')],
      requestBody: body(ref('AppUpdate')),
      responses: { '200': ok('The app as it is now.', ref('App'), etag), ...problems(400, 401, 403, 404, 412) },
    }),
    delete: op('Apps', 'deleteApp', 'Delete an app with its keys: its tokens stop working at once', 'apps:write', {
      parameters: [param('ifMatch')],
      responses: { '204': { description: 'Deleted.' }, ...problems(401, 403, 404, 412) },
    }),
  },
  '/apps/{app}/keys': {
    parameters: [param('app')],
    get: op('Keys', 'listKeys', "List an app's keys", 'apps:read', { responses: { '200': ok("The app's keys.", ref('CredentialList')), ...problems(401, 403, 404) } }),
    post: op('Keys', 'rotateKey', 'A new key and secret; the earlier keys work until the overlap ends (portal.keyOverlap)', 'keys:write', {
      parameters: [param('idempotencyKey')],
      requestBody: body({ type: 'object', additionalProperties: false, properties: {} }, false),
      responses: { '201': ok('The new key and secret, shown once.', ref('RotatedKey'), replayed), ...problems(401, 403, 404, 409, 422) },
    }),
  },
  '/apps/{app}/keys/import': {
    parameters: [param('app')],
    post: op('Keys', 'importKey', 'Register a key and secret made by another gateway (Apigee, Kong): the client keeps working unchanged', 'keys:write', {
      parameters: [param('idempotencyKey')],
      requestBody: body(ref('KeyImport')),
      responses: { '201': ok('The key (never its secret).', ref('Credential'), replayed), ...problems(400, 401, 403, 404, 409, 422) },
    }),
  },
  '/apps/{app}/keys/{key}/revoke': {
    parameters: [param('app'), param('key')],
    post: op('Keys', 'revokeKey', 'Revoke a key: no new tokens with it, and its tokens stop working', 'keys:write', {
      requestBody: body({ type: 'object', additionalProperties: false, properties: {} }, false),
      responses: { '200': ok('The key as it is now.', ref('Credential')), ...problems(401, 403, 404, 409) },
    }),
  },
  '/tokens/revoke': {
    post: op('Tokens', 'revokeTokens', 'Revoke every token of an app, or of a user across every app (log out everywhere)', 'tokens:revoke', {
      requestBody: body(ref('TokenRevocation')),
      responses: { '200': ok('How many tokens were revoked.', ref('Revoked')), ...problems(400, 401, 403, 404) },
    }),
  },
  '/products': {
    get: op('Products', 'listProducts', 'List the API products the configuration declares, with their routes and scopes', 'products:read', {
      parameters: [param('limit'), param('cursor')],
      responses: { '200': ok('A page of products.', ref('ProductList')), ...problems(400, 401, 403) },
    }),
  },
  '/products/{product}': {
    get: op('Products', 'getProduct', 'Read an API product', 'products:read', {
      parameters: [{ name: 'product', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { '200': ok('The product.', ref('Product')), ...problems(401, 403, 404) },
    }),
  },
  '/usage': {
    get: op('Usage', 'listUsage', "Calls per app, product, route and status class per hour (management clients' own calls are left out)", 'usage:read', {
      parameters: [
        { name: 'from', in: 'query', description: 'From this hour on (RFC 3339); default: 24 hours ago.', schema: { type: 'string', format: 'date-time' } },
        { name: 'to', in: 'query', description: 'Up to this time, not included (RFC 3339); default: now.', schema: { type: 'string', format: 'date-time' } },
        { name: 'app', in: 'query', description: "Only this app's calls (its id).", schema: { type: 'string' } },
        { name: 'product', in: 'query', schema: { type: 'string' } },
        { name: 'route', in: 'query', schema: { type: 'string' } },
        param('limit'),
        param('cursor'),
      ],
      responses: { '200': ok('A page of counts, by hour, app, route and status class.', ref('UsageList')), ...problems(400, 401, 403) },
    }),
  },
};

/** The document, as the listener serves it. */
export const managementDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Token gateway management API',
    version: '1',
    description:
      'Developers, apps, keys, tokens, products and usage, for automation. Every call needs an access token of a management client (`gateway admin management-clients create --scopes …`), from this listener’s `/oauth2/token` with `client_credentials`. Errors are `application/problem+json`. Creates honour `Idempotency-Key`; updates and deletes honour `If-Match`.',
  },
  servers: [{ url: '/v1' }],
  tags: [
    { name: 'Developers', description: 'Developer accounts.' },
    { name: 'Apps', description: 'Apps registered for a product.' },
    { name: 'Keys', description: 'App keys (client credentials).' },
    { name: 'Tokens', description: 'Access and refresh tokens.' },
    { name: 'Products', description: 'The API products the configuration declares.' },
    { name: 'Usage', description: 'Calls counted per hour.' },
  ],
  paths,
  components: {
    securitySchemes: { management: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: '/oauth2/token', scopes: MANAGEMENT_SCOPES } } } },
    parameters: {
      developer: { name: 'developer', in: 'path', required: true, description: "The developer's id or email.", schema: { type: 'string' } },
      app: { name: 'app', in: 'path', required: true, description: "The app's id.", schema: { type: 'string' } },
      key: { name: 'key', in: 'path', required: true, schema: { type: 'string' } },
      limit: { name: 'limit', in: 'query', description: 'At most this many items (default 100).', schema: { type: 'integer', minimum: 1, maximum: 500 } },
      cursor: { name: 'cursor', in: 'query', description: 'The `next` of the previous page.', schema: { type: 'string', maxLength: 1024 } },
      idempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        description: 'A retry with the same key and body gets the first answer again instead of creating twice; kept 24 hours.',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
      },
      ifMatch: { name: 'If-Match', in: 'header', description: 'The ETag of the version the change is meant for (412 when it is not the current one).', schema: { type: 'string', maxLength: 1024 } },
    },
    responses: Object.fromEntries(Object.entries(PROBLEMS).map(([status, description]) => [`Problem${status}`, { description, content: { 'application/problem+json': { schema: ref('Problem') } } }])),
    schemas,
  },
};
