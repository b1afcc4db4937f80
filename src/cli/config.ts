import type { Command } from 'commander';
import { loadConfigFile } from '../config/load.ts';
import { editorSchema } from '../config/schema.ts';
import type { CliIo } from './io.ts';

export const DEFAULT_CONFIG = 'gateway.yaml';

export function registerConfig(program: Command, io: CliIo): void {
  const config = program.command('config').description('check a configuration file, or print its JSON Schema');
  config
    .command('check')
    .description('validate a configuration file without serving; exits non-zero on an error')
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG)
    .action((opts: { config: string }) => {
      const c = loadConfigFile(opts.config, { env: io.env });
      io.out(`${opts.config}: ok (${c.products.size} products, ${c.routes.size} routes, ${c.upstreams.size} upstreams)`);
    });
  config
    .command('schema')
    .description('print the JSON Schema of the configuration file, for editors')
    .action(() => io.out(JSON.stringify(editorSchema(), null, 2)));
}
