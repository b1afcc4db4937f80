// An OpenAPI document's operations as routes: named by operationId, at the base path plus the
// document's path template, guarded by the scopes of its security requirement, with the policies
// the YAML attaches to the document, to its tags and to the operation, in that order.
import path from 'node:path';
import type { ApiDocument, Operation } from './document.ts';

/** The YAML's settings of one document (`openapi.<name>`); `P` is a policy entry (the config's, which this part does not know). */
export interface OpenApiSettings<P> {
  file: string;
  upstream: string;
  basePath?: string;
  policies?: readonly P[];
  tags?: Readonly<Record<string, { policies: readonly P[] }>>;
  operations?: Readonly<Record<string, { policies: readonly P[] }>>;
  requireSubject?: boolean;
}

export interface OperationRoute<P> {
  name: string;
  method: string;
  path: string;
  scopes: readonly string[];
  /** Its policies in order, each list with where the YAML has it. */
  policies: readonly PolicyList<P>[];
  operation: Operation;
}

export interface PolicyList<P> {
  at: (string | number)[];
  entries: readonly P[];
}

type Report = (segments: (string | number)[], message: string) => void;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const SEGMENT = /^([A-Za-z0-9._~!$&'()*+,=:@-]+|\{[A-Za-z_][A-Za-z0-9_]*\})$/;

/** Where an operation is, for messages: its method, path, file and line. */
export const describe = (op: Operation) => `${op.method} ${op.path} (${path.basename(op.file)}${op.line === undefined ? '' : `:${op.line}`})`;

/** The routes of a document's operations; problems are reported under `openapi.<api>`. */
export function operationRoutes<P>(api: string, settings: OpenApiSettings<P>, doc: ApiDocument, report: Report): OperationRoute<P>[] {
  const at: (string | number)[] = ['openapi', api];
  const basePath = settings.basePath ?? doc.serverPath;
  const routes: OperationRoute<P>[] = [];
  for (const op of doc.operations) {
    if (op.operationId === undefined) {
      report([...at, 'file'], `operation ${describe(op)} has no operationId: the gateway names its route by it`);
      continue;
    }
    if (!NAME.test(op.operationId)) {
      report([...at, 'file'], `operationId "${op.operationId}" of ${describe(op)} cannot name a route (must match /${NAME.source}/)`);
      continue;
    }
    if (op.method === 'TRACE') {
      report([...at, 'file'], `operation ${describe(op)}: the gateway does not route TRACE`);
      continue;
    }
    const full = `${basePath}${op.path}`;
    if (
      full !== '/' &&
      !full
        .split('/')
        .slice(1)
        .every((s) => SEGMENT.test(s))
    ) {
      report([...at, 'file'], `the path of ${describe(op)} has a segment the gateway cannot route (each is plain characters or one {name})`);
      continue;
    }
    const scopes = operationScopes(op);
    if (typeof scopes === 'string') {
      report([...at, 'file'], `operation ${describe(op)}: ${scopes}`);
      continue;
    }
    routes.push({
      name: op.operationId,
      method: op.method,
      path: full,
      scopes,
      policies: [
        { at: [...at, 'policies'], entries: settings.policies ?? [] },
        ...op.tags.map((tag) => ({ at: [...at, 'tags', tag, 'policies'], entries: settings.tags?.[tag]?.policies ?? [] })),
        { at: [...at, 'operations', op.operationId, 'policies'], entries: settings.operations?.[op.operationId]?.policies ?? [] },
      ].filter((list) => list.entries.length > 0),
      operation: op,
    });
  }
  const known = new Set(routes.map((r) => r.name));
  for (const tag of Object.keys(settings.tags ?? {})) {
    if (!doc.operations.some((op) => op.tags.includes(tag))) report([...at, 'tags', tag], `no operation of ${path.basename(doc.file)} has the tag "${tag}"`);
  }
  for (const id of Object.keys(settings.operations ?? {})) {
    if (!known.has(id)) report([...at, 'operations', id], `${path.basename(doc.file)} has no operation "${id}"`);
  }
  return routes;
}

/**
 * The scopes a token needs: those of the security requirement. Alternatives (a list of
 * requirements, any one of which will do) must agree on their scopes: a route has one set.
 */
function operationScopes(op: Operation): string[] | string {
  const sets = op.security.map((alternative) => [...new Set(Object.values(alternative).flat())].sort());
  const distinct = new Set(sets.map((s) => s.join(' ')));
  if (distinct.size > 1) return `its security alternatives ask for different scopes (${[...distinct].map((s) => `[${s}]`).join(' or ')}); the gateway checks one set of scopes per route`;
  return sets[0] ?? [];
}
