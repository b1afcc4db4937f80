import { Command, CommanderError } from 'commander';
import { AdminError } from '../admin/operations.ts';
import { ConfigError } from '../config/load.ts';
import { StoreUnavailable } from '../store/port/index.ts';
import { registerAdmin } from './admin.ts';
import { registerConfig } from './config.ts';
import { registerHealthcheck } from './healthcheck.ts';
import { registerReload } from './reload.ts';
import { CliError, terminalText, type CliIo } from './io.ts';
import { registerRun } from './run.ts';
import pkg from '../../package.json' with { type: 'json' };

export function buildProgram(io: CliIo): Command {
  const program = new Command('gateway')
    .description('OAuth 2.0 token-issuing API gateway')
    // Bundled at build time, so the single executable knows its version without package.json.
    .version(pkg.version, '-V, --version')
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  registerConfig(program, io);
  registerAdmin(program, io);
  registerHealthcheck(program, io);
  registerReload(program, io);
  // Last: subcommands inherit settings from the root when they are made, and only the root may
  // take excess arguments (to call them an unknown command).
  registerRun(program, io);
  return program;
}

/** Runs the CLI and maps every failure to a message and an exit code, in one place. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof ConfigError) {
      io.err(`error: invalid configuration:\n${err.message}`);
      return 2;
    }
    if (err instanceof StoreUnavailable) {
      io.err(`error: the store is unavailable, nothing was changed; try again: ${terminalText(err.message)}`);
      return 1;
    }
    if (err instanceof AdminError || err instanceof CliError) {
      // A message may quote what was typed or stored.
      io.err(`error: ${terminalText(err.message)}`);
      return err instanceof CliError ? err.exitCode : 1;
    }
    io.err(`error: ${(err as Error).message ?? String(err)}`);
    return 70;
  }
}
