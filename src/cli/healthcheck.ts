// `gateway healthcheck`: whether a running gateway answers, for a container's HEALTHCHECK, which
// has no shell or curl to ask with (Dockerfile). Docker reads exit 1 as unhealthy and reserves 2,
// so every failure, a bad config included, exits 1.
import { request } from 'node:http';
import type { Command } from 'commander';
import { ConfigError } from '../config/load.ts';
import { loopbackFor } from '../http/listener.ts';
import { OAUTH_PATHS } from '../oauth/endpoint.ts';
import { commandConfig, DEFAULT_CONFIG } from './config.ts';
import { CliError, type CliIo } from './io.ts';

const TIMEOUT_MS = 2000;

export function registerHealthcheck(program: Command, io: CliIo): void {
  program
    .command('healthcheck')
    .description(`exit 0 if the gateway the config describes answers ${OAUTH_PATHS.metadata} with 200 within ${TIMEOUT_MS / 1000} s, else 1`)
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG)
    .option('--url <url>', 'ask the gateway at this address instead of the one the config listens on')
    .action(async (opts: { url?: string }, cmd: Command) => {
      const target = opts.url === undefined ? configuredListener(cmd, io) : givenUrl(opts.url);
      const shown = `http://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}${OAUTH_PATHS.metadata}`;
      const status = await statusOf(target);
      if (typeof status === 'string') throw new CliError(`unhealthy: ${shown}: ${status}`);
      if (status !== 200) throw new CliError(`unhealthy: ${shown} answered ${status}`);
      io.out(`healthy: ${shown} answered 200`);
    });
}

interface Target {
  host: string;
  port: number;
}

function givenUrl(text: string): Target {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url?.protocol !== 'http:') throw new CliError(`--url: "${text}" is not an http:// address`);
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port || 80) };
}

function configuredListener(cmd: Command, io: CliIo): Target {
  let config;
  try {
    config = commandConfig(cmd, io);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`invalid configuration:\n${err.message}`);
    if (err instanceof CliError) throw new CliError(err.message);
    throw err;
  }
  if (config.oauth.issuer === undefined) throw new CliError(`${config.file} sets no oauth.issuer: without it the gateway serves no ${OAUTH_PATHS.metadata} to ask`);
  return { host: loopbackFor(config.listen.host), port: config.listen.port };
}

/** The status of a GET of the metadata document, or why there is none. */
function statusOf({ host, port }: Target): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: OAUTH_PATHS.metadata, agent: false, timeout: TIMEOUT_MS }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
    req.end();
  });
}
