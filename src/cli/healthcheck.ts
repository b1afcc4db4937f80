// `gateway healthcheck`: whether a running gateway answers, for a container's HEALTHCHECK, which
// has no shell or curl to ask with (Dockerfile).
import { request } from 'node:http';
import type { Command } from 'commander';
import { OAUTH_PATHS } from '../oauth/endpoint.ts';
import { commandConfig, DEFAULT_CONFIG } from './config.ts';
import { CliError, type CliIo } from './io.ts';

const TIMEOUT_MS = 2000;

export function registerHealthcheck(program: Command, io: CliIo): void {
  program
    .command('healthcheck')
    .description(`exit 0 if the gateway the config describes answers ${OAUTH_PATHS.metadata} with 200 within 2 s, else 1`)
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG)
    .option('--url <url>', 'ask the gateway at this address instead of the one the config listens on')
    .action(async (opts: { url?: string }, cmd: Command) => {
      let base: URL;
      if (opts.url !== undefined) {
        if (!URL.canParse(opts.url) || !/^http:$/.test(new URL(opts.url).protocol)) throw new CliError(`--url: "${opts.url}" is not an http:// address`, 2);
        base = new URL(opts.url);
      } else {
        const { listen, oauth, file } = commandConfig(cmd, io);
        if (oauth.issuer === undefined) throw new CliError(`${file} sets no oauth.issuer: without it the gateway serves no ${OAUTH_PATHS.metadata} to ask`, 2);
        // A listener on every address answers on loopback.
        const host = listen.host === '0.0.0.0' ? '127.0.0.1' : listen.host === '::' ? '[::1]' : listen.host.includes(':') ? `[${listen.host}]` : listen.host;
        base = new URL(`http://${host}:${listen.port}`);
      }
      const url = new URL(OAUTH_PATHS.metadata, base);
      const status = await statusOf(url);
      if (typeof status === 'string') throw new CliError(`unhealthy: ${url.href}: ${status}`);
      if (status !== 200) throw new CliError(`unhealthy: ${url.href} answered ${status}`);
      io.out(`healthy: ${url.href} answered 200`);
    });
}

/** The status of a GET, or why there is none. */
function statusOf(url: URL): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: TIMEOUT_MS }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
    req.end();
  });
}
