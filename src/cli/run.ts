import type { Command } from 'commander';
import { startGateway } from '../main.ts';
import { startWorkers } from '../workers.ts';
import { commandConfig, DEFAULT_CONFIG } from './config.ts';
import { CliError, type CliIo } from './io.ts';

/** `gateway --config f [--port N]`: serve until SIGINT or SIGTERM, then drain and exit. */
export function registerRun(program: Command, io: CliIo): void {
  program
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG)
    .option('-p, --port <port>', "override the main listener's port")
    // `gateway bogus` is a mistyped command, not an argument of the run.
    .allowExcessArguments()
    .action(async (opts: { config: string; port?: string }, cmd: Command) => {
      if (cmd.args.length > 0) {
        const commands = cmd.commands.map((c) => c.name()).join(', ');
        throw new CliError(`unknown command '${cmd.args[0]}' (commands: ${commands}; gateway --help describes them)`);
      }
      let port: number | undefined;
      if (opts.port !== undefined) {
        port = Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port: "${opts.port}" is not a port number`);
      }
      const config = commandConfig(cmd, io);
      const gateway =
        config.workers > 1
          ? await startWorkers(config, { env: { ...io.env }, ...(port === undefined ? {} : { port }) })
          : await startGateway({ config, ...(port === undefined ? {} : { port }) });
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await gateway.close();
    });
}
