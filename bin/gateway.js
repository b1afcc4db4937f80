#!/usr/bin/env node
// Runs the TypeScript entry point through tsx's loader; the single executable build bundles it instead.
import { register } from 'tsx/esm/api';

register();
await import('../cmd/gateway.ts');
