// The scheme and host a client addressed: a trusted proxy's X-Forwarded-Proto and
// X-Forwarded-Host, else the listener's scheme and listen.publicHost. Never a client's
// forwarding headers; the Host header only where the caller decides it may stand in.
import type { IncomingMessage } from 'node:http';
import { createTrustedPeer, peerAddress } from './ip.ts';

// RFC 9110 §7.2: uri-host [":" port], as a proxy in front would send it.
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

export interface PublicOrigin {
  /** What a trusted proxy in front says (one that ends TLS says https), else the listener's own. */
  proto(req: IncomingMessage, listener: string): string;
  /** What a trusted proxy in front says, else listen.publicHost; undefined when neither says. */
  host(req: IncomingMessage): string | undefined;
  /** The address and port the connection reached, as a URI's host; and localhost's too, when it is a loopback one. Never a client's word. */
  own(req: IncomingMessage): string[];
}

export function createPublicOrigin(settings: { trustedProxies: readonly string[]; publicHost: string | undefined }): PublicOrigin {
  const fromTrustedProxy = createTrustedPeer(settings.trustedProxies);
  return {
    proto(req, listener) {
      if (fromTrustedProxy(req)) {
        const said = req.headers['x-forwarded-proto'];
        if (said === 'https' || said === 'http') return said;
      }
      return listener;
    },
    host(req) {
      if (fromTrustedProxy(req)) {
        const said = req.headers['x-forwarded-host'];
        if (typeof said === 'string' && HOST.test(said)) return said;
      }
      return settings.publicHost;
    },
    own(req) {
      const { localAddress, localPort } = req.socket;
      if (localAddress === undefined || localPort === undefined) return [];
      const address = peerAddress(localAddress);
      const own = `${address.includes(':') ? `[${address}]` : address}:${localPort}`;
      return address === '127.0.0.1' || address === '::1' ? [own, `localhost:${localPort}`] : [own];
    },
  };
}
