// Writes docs/configuration.md from the config schema: `npm run docs:config`.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { configReference } from '../src/config/reference.ts';

export const CONFIG_DOCS = path.join(import.meta.dirname, '..', 'docs', 'configuration.md');

writeFileSync(CONFIG_DOCS, configReference());
console.log(`wrote ${path.relative(process.cwd(), CONFIG_DOCS)}`);
