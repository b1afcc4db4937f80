// What a load compiled, kept with the config it loaded so that the runtime compiled from it uses
// it rather than compiling again: each OpenAPI document read and its validators compiled, and what
// each policy made of its options (validateRequest's schemas). A worker thread loads the file
// itself, so each thread has its own.
import { Documents } from '../openapi/validators.ts';
import type { CompileCache } from '../policies/policy.ts';
import type { Config } from './types.ts';

export interface Compiled {
  documents: Documents;
  policies: CompileCache;
}

export function createCompiled(): Compiled {
  const made = new WeakMap<object, unknown>();
  return {
    documents: new Documents(),
    policies: {
      once<T>(options: object, make: () => T): T {
        if (!made.has(options)) made.set(options, make());
        return made.get(options) as T;
      },
    },
  };
}

const COMPILED = Symbol('compiled');

/** Keeps `compiled` with `config`, out of its enumerable (and frozen) values. */
export function keepCompiled(config: Config, compiled: Compiled): Config {
  Object.defineProperty(config, COMPILED, { value: compiled, enumerable: false });
  return config;
}

/** What the load of `config` compiled; for a config not made by a load (a copy), a fresh start. */
export function compiledOf(config: Config): Compiled {
  return (config as Config & { [COMPILED]?: Compiled })[COMPILED] ?? createCompiled();
}
