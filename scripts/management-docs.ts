// Writes docs/management-api.md and the management API's generated client types from its OpenAPI
// document (src/management/document.ts): `npm run docs:management`.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { managementReference } from '../src/management/reference.ts';
import { MANAGEMENT_CLIENT, managementClientSource } from './management-client.ts';

export const MANAGEMENT_DOCS = path.join(import.meta.dirname, '..', 'docs', 'management-api.md');

writeFileSync(MANAGEMENT_DOCS, managementReference());
writeFileSync(MANAGEMENT_CLIENT, await managementClientSource());
for (const file of [MANAGEMENT_DOCS, MANAGEMENT_CLIENT]) console.log(`wrote ${path.relative(process.cwd(), file)}`);
