// `gateway healthcheck`: whether a running gateway answers, for a container's HEALTHCHECK, which
// has no shell or curl to ask with (Dockerfile). Docker reads exit 1 as unhealthy and reserves 2,
// so every failure, a bad config included, exits 1. It asks the metadata document (200) when the
// config names oauth.issuer, else the token endpoint with a GET, which a gateway answers 405 with
// `Allow: POST`: an answer no other server on the port is likely to give.
import { request } from 'node:http';
import type { Command } from 'commander';
import { ConfigError } from '../config/load.ts';
import type { Config } from '../config/types.ts';
import { loopbackFor } from '../http/listener.ts';
import { OAUTH_PATHS } from '../oauth/endpoint.ts';
import { commandConfig, DEFAULT_CONFIG } from './config.ts';
import { CliError, type CliIo } from './io.ts';

const TIMEOUT_MS = 2000;

export function registerHealthcheck(program: Command, io: CliIo): void {
  program
    .command('healthcheck')
    .description(
      `exit 0 if the gateway the config describes answers within ${TIMEOUT_MS / 1000} s (${OAUTH_PATHS.metadata} with 200, or without oauth.issuer a GET of ${OAUTH_PATHS.token} with 405), else 1`,
    )
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG)
    .option('--url <url>', 'ask the gateway at this address instead of the one the config listens on')
    .action(async (opts: { url?: string }, cmd: Command) => {
      const target = opts.url === undefined ? configuredListener(cmd, io) : givenUrl(opts.url);
      const shown = `http://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}${target.probe.path}`;
      const answer = await answerOf(target);
      if (typeof answer === 'string') throw new CliError(`unhealthy: ${shown}: ${answer}`);
      if (answer.status !== target.probe.status || (target.probe.allow !== undefined && answer.allow !== target.probe.allow)) {
        throw new CliError(`unhealthy: ${shown} answered ${answer.status}`);
      }
      io.out(`healthy: ${shown} answered ${answer.status}`);
    });
}

/** What to ask, and the answer a gateway gives. */
interface Probe {
  path: string;
  status: number;
  /** The Allow header the answer must carry. */
  allow?: string;
}

const METADATA: Probe = { path: OAUTH_PATHS.metadata, status: 200 };
const TOKEN_ENDPOINT: Probe = { path: OAUTH_PATHS.token, status: 405, allow: 'POST' };

interface Target {
  host: string;
  port: number;
  probe: Probe;
}

function givenUrl(text: string): Target {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url?.protocol !== 'http:') throw new CliError(`--url: "${text}" is not an http:// address`);
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port || 80), probe: METADATA };
}

function configuredListener(cmd: Command, io: CliIo): Target {
  let config: Config;
  try {
    config = commandConfig(cmd, io);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`invalid configuration:\n${err.message}`);
    if (err instanceof CliError) throw new CliError(err.message);
    throw err;
  }
  // Without an issuer the gateway serves no metadata document.
  return { host: loopbackFor(config.listen.host), port: config.listen.port, probe: config.oauth.issuer === undefined ? TOKEN_ENDPOINT : METADATA };
}

/** The status (and Allow header) of a GET of the probe's path, or why there is none. */
function answerOf({ host, port, probe }: Target): Promise<{ status: number; allow: string | undefined } | string> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: probe.path, agent: false, timeout: TIMEOUT_MS }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, allow: res.headers.allow });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
    req.end();
  });
}
