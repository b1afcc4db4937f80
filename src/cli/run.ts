import type { Command } from 'commander';
import { startGateway, type Gateway } from '../host/index.ts';
import { commandConfig, DEFAULT_CONFIG } from './config.ts';
import { CliError, type CliIo } from './io.ts';

/**
 * `gateway --config f [--port N]`: serve; SIGHUP reloads the config; SIGINT or SIGTERM drains and
 * exits 0, and a second one exits at once.
 */
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
      const env = { ...io.env };
      // Each reload logs its own result; a failed one leaves the running config serving. A SIGHUP
      // during the start (which would otherwise end the process) waits for it.
      let gateway: Gateway | undefined;
      let asked = false;
      const reload = () => {
        if (gateway === undefined) asked = true;
        else void gateway.reload();
      };
      process.on('SIGHUP', reload);
      try {
        gateway = await startGateway({ config, env, collectWhenQuiet: true, ...(port === undefined ? {} : { port }) });
      } catch (err) {
        process.off('SIGHUP', reload);
        throw err;
      }
      if (asked) void gateway.reload();
      const running = gateway;
      await new Promise<void>((resolve) => {
        // A SIGHUP while stopping is refused by the gateway (and logged), not the signal's default end.
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          // An operator who asks twice does not want to wait for the drain.
          process.once('SIGINT', () => process.exit(1));
          process.once('SIGTERM', () => process.exit(1));
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await running.close();
    });
}
