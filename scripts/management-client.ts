// The TypeScript types of the management API, generated from its OpenAPI document by
// openapi-typescript, for the typed client of test/management/generated-client.test.ts
// (openapi-fetch). Written by `npm run docs:management`; test/management/reference.test.ts fails
// when the committed file differs from what the document gives now.
import path from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { managementDocument } from '../src/management/document.ts';

export const MANAGEMENT_CLIENT = path.join(import.meta.dirname, '..', 'test', 'management', 'generated', 'api.ts');

const HEADER = '// Generated from src/management/document.ts by `npm run docs:management` (openapi-typescript); do not edit by hand.\n\n';

export async function managementClientSource(): Promise<string> {
  // A copy: the generator must not touch the document the listener serves.
  const ast = await openapiTS(structuredClone(managementDocument) as unknown as OpenAPI3, {
    // A field with a default may be left out of a request: keep it optional in the types.
    defaultNonNullable: false,
  });
  return HEADER + astToString(ast);
}
