// Which requests are the portal's own. DNS rebinding makes a foreign page's requests reach a
// loopback-bound portal under the foreign name, so the Host must be one of the portal's names
// (RFC 9110 §7.2, answered 421 otherwise, §15.5.20). A POST must come from the portal's own pages:
// its Origin (RFC 6454 §7), or, from a browser that sends none, Sec-Fetch-Site or the Referer,
// must be the portal's. The CSRF token stays the main defence; this one holds even if a token leaks.
import type { IncomingMessage } from 'node:http';

export interface PortalOrigins {
  /** The origin its links carry: portal.publicUrl, or http(s)://localhost:<port>. */
  publicUrl: string;
  /** Whether the Host header names this portal. */
  knowsHost(host: string | undefined): boolean;
  /** Whether a POST says it comes from one of the portal's own pages (or says nothing). */
  sameOrigin(req: IncomingMessage): boolean;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

function bindsLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.[0-9.]+$/.test(host);
}

export function portalOrigins(options: { host: string; port: number; secure: boolean; publicUrl: string | undefined }): PortalOrigins {
  const scheme = options.secure ? 'https' : 'http';
  const publicUrl = options.publicUrl ?? `${scheme}://localhost:${options.port}`;
  const url = new URL(publicUrl);
  const hosts = new Set([url.host, `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`]);
  if (bindsLoopback(options.host)) for (const name of LOOPBACK_NAMES) hosts.add(`${name}:${options.port}`);
  // Behind a TLS-terminating proxy the browser's origin is publicUrl's, whatever scheme the portal speaks.
  const origins = new Set([url.origin, ...[...hosts].map((h) => `${scheme}://${h}`)]);

  return {
    publicUrl,
    knowsHost: (host) => host !== undefined && hosts.has(host.toLowerCase()),
    sameOrigin(req) {
      const origin = req.headers.origin;
      if (origin !== undefined) return origins.has(origin.toLowerCase());
      // Browsers that send no Origin on a POST send Sec-Fetch-Site (Fetch Metadata), or at least
      // the Referer (the portal's Referrer-Policy: same-origin keeps it on its own requests).
      const site = req.headers['sec-fetch-site'];
      if (site !== undefined) return site === 'same-origin';
      const referer = req.headers.referer;
      if (referer !== undefined) return URL.canParse(referer) && origins.has(new URL(referer).origin);
      // Not a browser (curl, a script): nothing to be confused about; the CSRF token still applies.
      return true;
    },
  };
}
