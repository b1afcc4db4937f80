// A listener (HTTP or HTTPS) that can be drained: it stops accepting, answers whatever still
// arrives on an open connection with `Connection: close`, and closes a keep-alive connection only
// once it has stayed idle, so that a request the client has already sent is answered, not reset.
import { createServer, Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import { createServer as createNetServer, Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import { createSecureContext } from 'node:tls';

/**
 * How long a client may take to send its headers (and, over TLS, to complete the handshake), and
 * its whole request (Node answers 408), and may stay idle between requests.
 */
export interface ListenerTimeouts {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
}

/** A certificate chain and its key, PEM. */
export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

export interface Listener {
  url: string;
  port: number;
  /** Serves new connections with this certificate; connections already open keep theirs. */
  setCertificate(tls: TlsFiles): void;
  /** Applies new timeouts to every request from now on. */
  setTimeouts(timeouts: ListenerTimeouts): void;
  /**
   * Stops accepting, answers every request still arriving with `Connection: close`, closes idle
   * connections once idle for a moment, and resolves when every connection is closed; after
   * `timeoutMs` the connections still open are cut.
   */
  drain(timeoutMs: number): Promise<void>;
}

/**
 * During a drain, how long a connection must have been idle before it is closed. A client that
 * had sent its next request just as the drain began gets it answered (with `Connection: close`);
 * closing at once would reset that request.
 */
const DRAIN_IDLE_MS = 1_000;
const DRAIN_CHECK_MS = 100;
/** TLS 1.2 at least, on every listener that serves HTTPS. */
const MIN_TLS = 'TLSv1.2';

/** The answer is the connection's last, and says so (RFC 9112 §9.6), whatever was set or removed before. */
function endsConnection(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  res.setHeader('connection', 'close');
}

/** Where a client on this machine reaches a listener bound to `host`: one on every address (IPv4 or both) answers on IPv4's loopback, which every container has. */
export function loopbackFor(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}

/** The URL of a listener bound to `host` and `port`, as a client on this machine calls it. */
export function listenerUrl(host: string, port: number, tls: boolean): string {
  const reach = loopbackFor(host);
  return `${tls ? 'https' : 'http'}://${reach.includes(':') ? `[${reach}]` : reach}:${port}`;
}

/** A port free on `host` now (the kernel's choice), for what must know its port before it listens. */
export async function freePort(host: string): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  host: string,
  port: number,
  options: { reusePort?: boolean; tls?: TlsFiles | undefined; timeouts: ListenerTimeouts; onError: (err: unknown) => void },
): Promise<Listener> {
  const { reusePort = false, tls } = options;
  /** Per open connection: answers not yet finished, since when it has had none, and the bytes it had read by then. */
  const connections = new Map<Socket, { answers: Set<ServerResponse>; idleSince: number; bytesRead: number }>();
  let draining = false;

  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const state = connections.get(req.socket);
    if (state !== undefined) {
      state.answers.add(res);
      res.once('close', () => {
        state.answers.delete(res);
        state.idleSince = performance.now();
        state.bytesRead = req.socket.bytesRead;
      });
    }
    // RFC 9112 §9.6: the last answer on this connection says so.
    if (draining) endsConnection(res);
    // A handler answers every failure itself; one that throws anyway must not take the process down.
    handler(req, res).catch((err: unknown) => {
      res.destroy();
      options.onError(err);
    });
  };
  // A slow sender cannot hold a connection for minutes. Node looks for expired requests only every
  // connectionsCheckingInterval (30 s by default), which let a trickled header live 29 s against
  // a documented 10; checked twice a second, each limit holds within a second.
  const settings = {
    headersTimeout: options.timeouts.headersMs,
    requestTimeout: options.timeouts.requestMs,
    connectionsCheckingInterval: Math.min(500, options.timeouts.headersMs),
    keepAliveTimeout: options.timeouts.keepAliveMs,
  };
  // The TLS handshake comes before the headers and gets their limit: Node's own is 120 s, in which
  // a client that connects and says nothing holds its socket. Set once: a reload does not change it.
  const server: Server | TlsServer =
    tls === undefined
      ? createServer(settings, serve)
      : createTlsServer({ ...settings, cert: tls.cert, key: tls.key, minVersion: MIN_TLS, handshakeTimeout: options.timeouts.headersMs }, serve);
  const setTimeouts = (timeouts: ListenerTimeouts) => {
    server.headersTimeout = timeouts.headersMs;
    server.requestTimeout = timeouts.requestMs;
    server.keepAliveTimeout = timeouts.keepAliveMs;
    // A client that stops reading its answer: once the socket's buffers are full nothing moves, and
    // after the request timeout without traffic either way the connection closes, handing the
    // upstream connection it held back to its pool. Else 128 such clients froze an upstream for good.
    server.timeout = timeouts.requestMs;
  };
  setTimeouts(options.timeouts);
  server.on(tls === undefined ? 'connection' : 'secureConnection', (socket: Socket) => {
    // A handshake that ends after the drain has finished finds no one to serve it.
    if (drainedAll) return void socket.destroy();
    connections.set(socket, { answers: new Set(), idleSince: performance.now(), bytesRead: 0 });
    socket.once('close', () => connections.delete(socket));
  });
  // Connections still in their TLS handshake, which `connections` does not hold yet: a drain ends them too.
  const handshaking = new Set<Socket>();
  if (tls !== undefined) {
    server.on('connection', (socket: Socket) => {
      handshaking.add(socket);
      socket.once('close', () => handshaking.delete(socket));
      socket.once('secure', () => handshaking.delete(socket));
    });
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, reusePort }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;

  let drained: Promise<void> | undefined;
  let drainedAll = false;
  function drain(timeoutMs: number): Promise<void> {
    drained ??= new Promise<void>((resolve) => {
      draining = true;
      // Stops accepting without http.Server's close, which would also close the idle connections at once.
      NetServer.prototype.close.call(server);
      // Answers already on their way but not yet begun end their connection too.
      for (const { answers } of connections.values()) for (const res of answers) if (!res.headersSent) endsConnection(res);
      const check = () => {
        const now = performance.now();
        for (const [socket, state] of connections) {
          if (state.answers.size > 0) continue;
          // Bytes of a next request count as activity: a request being sent is answered, not reset.
          if (socket.bytesRead !== state.bytesRead) {
            state.bytesRead = socket.bytesRead;
            state.idleSince = now;
          } else if (now - state.idleSince >= DRAIN_IDLE_MS) {
            socket.destroy();
          }
        }
        if (connections.size === 0) finish();
      };
      // The first look comes a check later: bytes already on the wire when the drain began are read by then.
      const checker = setInterval(check, DRAIN_CHECK_MS);
      const deadline = setTimeout(() => {
        server.closeAllConnections();
        finish();
      }, timeoutMs);
      function finish() {
        drainedAll = true;
        for (const socket of handshaking) socket.destroy();
        clearInterval(checker);
        clearTimeout(deadline);
        // Releases what http.Server keeps for its connections (the timeout checker); nothing accepts any more.
        server.close();
        resolve();
      }
      if (connections.size === 0) finish();
    });
    return drained;
  }

  return {
    port: address.port,
    url: listenerUrl(address.address, address.port, tls !== undefined),
    setCertificate(files) {
      (server as TlsServer).setSecureContext({ cert: files.cert, key: files.key, minVersion: MIN_TLS });
    },
    setTimeouts,
    drain,
  };
}

/** Fails with the reason when the chain and key are not a usable pair (checked before a reload swaps them in). */
export function checkCertificate(files: TlsFiles): void {
  createSecureContext({ cert: files.cert, key: files.key, minVersion: MIN_TLS });
}
