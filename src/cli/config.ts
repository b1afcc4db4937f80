import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { loadConfigFile, type Config } from '../config/load.ts';
import { editorSchema } from '../config/schema.ts';
import { CliError, type CliIo } from './io.ts';

export const DEFAULT_CONFIG = 'gateway.yaml';

/**
 * The config file a command names with --config (after the command, or before it: `gateway
 * --config f admin …`), or gateway.yaml in the current folder.
 */
export function commandConfig(cmd: Command, io: CliIo): Config {
  let named: Command | null = cmd;
  while (named !== null && named.getOptionValueSource('config') !== 'cli') named = named.parent;
  const file = (named ?? cmd).opts<{ config: string }>().config;
  if (named === null && !existsSync(file)) {
    throw new CliError(`no configuration file: ${path.resolve(file)} does not exist; name one with --config <file> (gateway.example.yaml is an example)`, 2);
  }
  return loadConfigFile(file, { env: io.env });
}

export function registerConfig(program: Command, io: CliIo): void {
  const config = program.command('config').description('check a configuration file, or print its JSON Schema');
  config
    .command('check')
    .description('validate a configuration file without serving; exits non-zero on an error')
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG)
    .action((opts: { config: string }, cmd: Command) => {
      const c = commandConfig(cmd, io);
      io.out(`${opts.config}: ok (${c.products.size} products, ${c.routes.size} routes, ${c.upstreams.size} upstreams)`);
    });
  config
    .command('schema')
    .description('print the JSON Schema of the configuration file, for editors')
    .action(() => io.out(JSON.stringify(editorSchema(), null, 2)));
}
