// The OpenAPI operation a validation policy checks against: the route's own when the route comes
// from a document, else the one the policy's `openapi` file has for the route's method and path.
import path from 'node:path';
import { DocumentError, findOperation, type ApiDocument, type Operation } from '../openapi/document.ts';
import type { Documents } from '../openapi/validators.ts';
import type { OperationSite, PolicyIssue, PolicySite } from './policy.ts';

export function siteOperation(file: string | undefined, site: PolicySite): OperationSite | PolicyIssue | undefined {
  if (file === undefined) return site.operation;
  let document: ApiDocument;
  try {
    document = site.documents.load(path.resolve(site.configDir, file));
  } catch (err) {
    if (!(err instanceof DocumentError)) throw err;
    const issue = err.issues[0]!;
    return { path: ['openapi'], message: `${issue.message}${issue.line === undefined ? '' : ` (${path.relative(site.configDir, issue.file)}:${issue.line})`}` };
  }
  const found = site.method === undefined || site.path === undefined ? undefined : findOperation(document, site.method, site.path);
  if (found === undefined) return { path: ['openapi'], message: `${file} has no operation ${site.method ?? ''} ${site.path ?? ''}` };
  return { document, ...found, validators: site.documents.validators(document) };
}

/** Where a route from a document (`operation.api` names it under `openapi`) stands in it; undefined for a route written out. */
export function operationSite(
  route: { path: string; operation: { api: string; operation: Operation } | undefined },
  byName: ReadonlyMap<string, ApiDocument>,
  documents: Documents,
): OperationSite | undefined {
  if (route.operation === undefined) return undefined;
  const document = byName.get(route.operation.api)!;
  return { document, operation: route.operation.operation, routePath: route.path, validators: documents.validators(document) };
}
