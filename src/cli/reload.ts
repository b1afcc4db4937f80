// `gateway reload`: asks the running gateway, through its admin listener, to read its config file
// again. The answer says whether it now serves the new config or, with every reason, kept the old.
// The gateway substitutes ${VAR} with its own environment, not this command's: a variable changed
// only here changes nothing there, which the output says when the file reads any.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { Command } from 'commander';
import { ADMIN_PATHS } from '../admin-listener/server.ts';
import { loopbackFor } from '../http/listener.ts';
import { commandConfig, DEFAULT_CONFIG } from './config.ts';
import { CliError, terminalText, type CliIo } from './io.ts';

const TIMEOUT_MS = 30_000;

export function registerReload(program: Command, io: CliIo): void {
  program
    .command('reload')
    .description('make the running gateway reload its config (through its admin listener; SIGHUP does the same)')
    .option('-c, --config <file>', 'configuration file (it names the admin listener to ask)', DEFAULT_CONFIG)
    .action(async (_opts: unknown, cmd: Command) => {
      const config = commandConfig(cmd, io);
      if (config.admin === undefined) throw new CliError(`${config.file} turns the admin listener off (admin: false): send the gateway SIGHUP instead`);
      const { host, port } = config.admin;
      const connectTo = loopbackFor(host);
      const answer = await post(connectTo, port);
      if (typeof answer === 'string') throw new CliError(`no gateway answered at ${connectTo}:${port}: ${answer}`);
      if (answer.status === 200) {
        io.out(`reloaded ${config.file}`);
        const variables = variablesOf(readFileSync(config.file, 'utf8'));
        if (variables.length > 0) {
          io.err(`note: the gateway read the file with its own environment, not this command's: changes to ${variables.join(', ')} made here do not reach it (restart the gateway to change them)`);
        }
        return;
      }
      let errors: unknown;
      try {
        errors = (JSON.parse(answer.body) as { errors?: unknown }).errors;
      } catch {
        errors = undefined;
      }
      if (answer.status !== 422 || !Array.isArray(errors)) {
        throw new CliError(`${connectTo}:${port} answered ${answer.status}, not as the gateway's admin listener does: ${terminalText(answer.body.slice(0, 200))}`);
      }
      throw new CliError(terminalText([`reload refused; the running config keeps serving:`, ...errors.map(String)].join('\n')));
    });
}

/** The variables a config file's values read (`${VAR}`, `${VAR:-default}`; not `$${`, nor comment lines). */
function variablesOf(text: string): string[] {
  const values = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n');
  const names = [...values.matchAll(/\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));
  return [...new Set(names)].sort();
}

function post(host: string, port: number): Promise<{ status: number; body: string } | string> {
  return new Promise((resolve) => {
    const req = request({ host, port, method: 'POST', path: ADMIN_PATHS.reload, agent: false, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
    req.end();
  });
}
