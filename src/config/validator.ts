// The config file's validator, compiled by ajv on first use. `npm run build` puts ajv's standalone
// code for the same schema and options in this module's place (scripts/build.ts), so the bundles
// and the executable start without compiling it: compiling is most of a start's CPU time.
import { Ajv, type ValidateFunction } from 'ajv';
import { configSchema, type ConfigFile } from './schema.ts';

export const CONFIG_AJV_OPTIONS = { allErrors: true, strict: true, allowUnionTypes: true, verbose: true } as const;

let compiled: ValidateFunction<ConfigFile> | undefined;

export function configValidator(): ValidateFunction<ConfigFile> {
  compiled ??= new Ajv(CONFIG_AJV_OPTIONS).compile<ConfigFile>(configSchema);
  return compiled;
}
