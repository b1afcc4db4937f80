// The documents under `openapi`: each read once, its operations declared as routes, and its
// request validators compiled once, here, for the runtime to use (./compiled.ts).
import path from 'node:path';
import { DocumentError, type ApiDocument } from '../openapi/document.ts';
import { describe, operationRoutes } from '../openapi/routes.ts';
import type { Documents } from '../openapi/validators.ts';
import { defaulted as d } from './defaults.ts';
import type { Report } from './errors.ts';
import type { ConfigFile } from './schema.ts';
import type { DeclaredRoute } from './routes.ts';

/** Reads each document and declares its operations; returns the documents read, by name. */
export function readDocuments(raw: ConfigFile, dir: string, documents: Documents, declare: (route: DeclaredRoute) => void, upstreams: ReadonlySet<string>, report: Report): Map<string, ApiDocument> {
  const read = new Map<string, ApiDocument>();
  for (const [api, o] of Object.entries(d(raw.openapi))) {
    if (!upstreams.has(o.upstream)) report(['openapi', api, 'upstream'], `unknown upstream "${o.upstream}"`);
    let doc: ApiDocument;
    try {
      doc = documents.load(path.resolve(dir, o.file));
    } catch (err) {
      if (!(err instanceof DocumentError)) throw err;
      for (const issue of err.issues) report(['openapi', api, 'file'], `${issue.message} (${path.relative(dir, issue.file) || issue.file}${issue.line === undefined ? '' : `:${issue.line}`})`);
      continue;
    }
    read.set(api, doc);
    for (const op of operationRoutes(api, o, doc, report)) {
      declare({
        ...op,
        upstream: o.upstream,
        requireSubject: d(o.requireSubject),
        upstreamIdentity: o.upstreamIdentity,
        rateLimitHeaders: d(o.rateLimitHeaders),
        at: ['openapi', api, 'operations', op.name],
        operation: { api, operation: op.operation },
      });
    }
  }
  return read;
}

/**
 * Compiles each operation's request validation (the runtime takes it from `documents`), and says
 * what a document asks that the gateway cannot check: a style its parameter cannot have, a schema ajv refuses.
 */
export function compileOperations(read: ReadonlyMap<string, ApiDocument>, declared: Iterable<DeclaredRoute>, documents: Documents, report: Report): void {
  for (const route of declared) {
    if (route.operation === undefined) continue;
    const { api, operation } = route.operation;
    try {
      documents.validators(read.get(api)!).request(operation, route.path, 0);
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
      report(['openapi', api, 'file'], `operation ${describe(operation)}: ${err.message}`);
    }
  }
}
