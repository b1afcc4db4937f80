// Connector to the third-party authorization server that checks resource owner credentials for
// the password grant. One new request per check, the gateway's own credentials, a deadline.
// The username and password are passed through and never stored or logged.
import { readFileSync } from 'node:fs';
import { Agent } from '../upstream/undici.ts';
import type { AuthServerSettings } from '../config/load.ts';
import { invalidGrant, temporarilyUnavailable } from '../oauth/errors.ts';
import { errorType, serverAttributes, type TraceSpan } from '../pipeline/trace.ts';

export interface AuthServerClient {
  /** The subject the server names (or the username); throws invalid_grant or temporarily_unavailable. With `span`, the call gets a span under it, and its trace context. */
  verify(username: string, password: string, span?: TraceSpan): Promise<string>;
  /** `force`: at once, failing the calls in flight. */
  close(force?: boolean): Promise<void>;
}

export function createAuthServerClient(settings: AuthServerSettings): AuthServerClient {
  const agent = new Agent({
    connect: { timeout: settings.timeoutMs, ...(settings.ca === undefined ? {} : { ca: readFileSync(settings.ca) }) },
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
  });
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (settings.clientId !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${settings.clientId}:${settings.clientSecret ?? ''}`).toString('base64')}`;
  }
  const origin = settings.url.origin;
  const path = settings.url.pathname + settings.url.search;

  return {
    async verify(username, password, parent) {
      const span = parent?.child('POST', 'client', {
        'http.request.method': 'POST',
        ...serverAttributes(settings.url),
        'url.full': `${origin}${settings.url.pathname}`,
        'gateway.auth_server': settings.name,
      });
      try {
        const subject = await ask(username, password, span);
        span?.end();
        return subject;
      } catch (err) {
        span?.fail(errorType(err));
        span?.end();
        throw err;
      }
    },
    close: (force = false) => (force ? agent.destroy() : agent.close()),
  };

  async function ask(username: string, password: string, span: TraceSpan | undefined): Promise<string> {
    let statusCode: number;
    let text: string;
    try {
      const traced = { ...headers };
      span?.propagate(traced);
      const res = await agent.request({
        origin,
        path,
        method: 'POST',
        headers: span === undefined ? headers : traced,
        body: JSON.stringify({ username, password }),
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
      statusCode = res.statusCode;
      span?.set({ 'http.response.status_code': statusCode });
      text = await res.body.text();
    } catch (err) {
      throw temporarilyUnavailable(`authorization server ${settings.name}: ${(err as { code?: string }).code ?? (err as Error).name}`);
    }
    if (statusCode === 401 || statusCode === 403) {
      throw invalidGrant('invalid resource owner credentials', `authorization server ${settings.name} answered ${statusCode}`);
    }
    if (statusCode < 200 || statusCode > 299) {
      throw temporarilyUnavailable(`authorization server ${settings.name} answered ${statusCode}`);
    }
    return subjectOf(text, settings.subjectField) ?? username;
  }
}

function subjectOf(text: string, field: string): string | undefined {
  try {
    const value = (JSON.parse(text) as Record<string, unknown> | null)?.[field];
    return typeof value === 'string' && value !== '' ? value : undefined;
  } catch {
    return undefined;
  }
}
