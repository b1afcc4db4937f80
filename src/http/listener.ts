// A listener (HTTP or HTTPS) that can be drained: it stops accepting, answers whatever still
// arrives on an open connection with `Connection: close`, and closes a keep-alive connection only
// once it has stayed idle, so that a request the client has already sent is answered, not reset.
import { createServer, type Server, type IncomingMessage, type ServerResponse } from 'node:http';
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
  /** After an answer given before the request's body was read: how long, how long silent and how many bytes to read and throw away before closing. */
  lingering: { ms: number; idleMs: number; bytes: number };
}

/** A certificate chain and its key, PEM; with `clientCa`, the CAs whose client certificates are asked for. */
export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
  clientCa?: Buffer | undefined;
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
   * `timeoutMs` the connections still open are cut. Resolves with how many of those were in the
   * middle of an answer: calls the drain cut.
   */
  drain(timeoutMs: number): Promise<number>;
}

/**
 * During a drain, how long a connection must have been idle before it is closed. A client that
 * had sent its next request just as the drain began gets it answered (with `Connection: close`);
 * closing at once would reset that request.
 */
const DRAIN_IDLE_MS = 1_000;
const DRAIN_CHECK_MS = 100;
/** How often a lingering connection's bytes are looked at: loopback carries some 20 MB in that time. */
const LINGER_CHECK_MS = 20;
/** TLS 1.2 at least, on every listener that serves HTTPS. */
const MIN_TLS = 'TLSv1.2';

/** The answer is the connection's last, and says so (RFC 9112 §9.6), whatever was set or removed before. */
function endsConnection(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  res.setHeader('connection', 'close');
}

/** Whether the connection ends with this answer: Node's decision, or the Connection header it was given. */
function isLast(res: ServerResponse): boolean {
  const connection = res.getHeader('connection');
  return !res.shouldKeepAlive || (typeof connection === 'string' && connection.toLowerCase() === 'close');
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

/** Per open connection: answers not yet finished, since when it has had none, and the bytes it had read by then. */
interface Connection {
  answers: Set<ServerResponse>;
  idleSince: number;
  bytesRead: number;
}

/** What a listener knows of its connections, for a drain. */
interface Connections {
  open: Map<Socket, Connection>;
  /** Connections still in their TLS handshake, which `open` does not hold yet: a drain ends them too. */
  handshaking: Set<Socket>;
  draining: boolean;
  /** The drain has finished: a handshake that ends now finds no one to serve it. */
  drained: boolean;
}

export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  host: string,
  port: number,
  options: { reusePort?: boolean; tls?: TlsFiles | undefined; timeouts: ListenerTimeouts; onError: (err: unknown) => void },
): Promise<Listener> {
  const { reusePort = false, tls } = options;
  const connections: Connections = { open: new Map(), handshaking: new Set(), draining: false, drained: false };
  // Read on every answer that ends a connection early; a reload changes it with the timeouts.
  const lingering = { ...options.timeouts.lingering };
  const server = createHttpServer(tls, options.timeouts, serving(connections, handler, options.onError, lingering));
  const setTimeouts = (timeouts: ListenerTimeouts) => {
    applyTimeouts(server, timeouts);
    Object.assign(lingering, timeouts.lingering);
  };
  setTimeouts(options.timeouts);
  track(server, tls !== undefined, connections);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, reusePort }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  let drained: Promise<number> | undefined;
  return {
    port: address.port,
    url: listenerUrl(address.address, address.port, tls !== undefined),
    setCertificate(files) {
      (server as TlsServer).setSecureContext(secureContext(files));
    },
    setTimeouts,
    drain: (timeoutMs) => (drained ??= drain(server, connections, timeoutMs)),
  };
}

/** The request listener: each answer counted on its connection, the last ones said to be last. */
function serving(connections: Connections, handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>, onError: (err: unknown) => void, lingering: ListenerTimeouts['lingering']) {
  return function serve(req: IncomingMessage, res: ServerResponse): void {
    // Before Node's own 'finish' handler closes the connection: an answer that ends it while the body still arrives lingers.
    res.once('prefinish', () => {
      if (!req.complete && isLast(res) && lingering.ms > 0) {
        // A body left paused (its reader stopped at a limit) would stall the socket: flowing with no reader, it is thrown away.
        req.resume();
        lingerAfter(req.socket, lingering);
      }
    });
    const state = connections.open.get(req.socket);
    if (state !== undefined) {
      state.answers.add(res);
      res.once('close', () => {
        state.answers.delete(res);
        state.idleSince = performance.now();
        state.bytesRead = req.socket.bytesRead;
      });
    }
    // RFC 9112 §9.6: the last answer on this connection says so.
    if (connections.draining) endsConnection(res);
    // A handler answers every failure itself; one that throws anyway must not take the process down.
    handler(req, res).catch((err: unknown) => {
      res.destroy();
      onError(err);
    });
  };
}

function createHttpServer(tls: TlsFiles | undefined, timeouts: ListenerTimeouts, serve: (req: IncomingMessage, res: ServerResponse) => void): Server | TlsServer {
  // A slow sender cannot hold a connection for minutes. Node looks for expired requests only every
  // connectionsCheckingInterval (30 s by default), which let a trickled header live 29 s against
  // a documented 10; checked twice a second, each limit holds within a second.
  const settings = {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    connectionsCheckingInterval: Math.min(500, timeouts.headersMs),
    keepAliveTimeout: timeouts.keepAliveMs,
  };
  // The TLS handshake comes before the headers and gets their limit: Node's own is 120 s, in which
  // a client that connects and says nothing holds its socket. Set once: a reload does not change it.
  if (tls === undefined) return createServer(settings, serve);
  // RFC 8705: a client certificate is asked for, never required: a connection without one is served,
  // and so is one whose certificate no CA of clientCa signed (a self-signed one an app registered);
  // what each certificate may do is decided per request.
  const clientCertificates = tls.clientCa === undefined ? {} : { requestCert: true, rejectUnauthorized: false };
  return createTlsServer({ ...settings, ...secureContext(tls), ...clientCertificates, handshakeTimeout: timeouts.headersMs }, serve);
}

function secureContext(files: TlsFiles) {
  return { cert: files.cert, key: files.key, minVersion: MIN_TLS, ...(files.clientCa === undefined ? {} : { ca: files.clientCa }) } as const;
}

function applyTimeouts(server: Server | TlsServer, timeouts: ListenerTimeouts): void {
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  // A client that stops reading its answer: once the socket's buffers are full nothing moves, and
  // after the request timeout without traffic either way the connection closes, handing the
  // upstream connection it held back to its pool. Else 128 such clients froze an upstream for good.
  server.timeout = timeouts.requestMs;
}

/** Keeps `connections` up to date: open once ready to serve (after the handshake over TLS), handshaking before. */
function track(server: Server | TlsServer, tls: boolean, connections: Connections): void {
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    if (connections.drained) return void socket.destroy();
    connections.open.set(socket, { answers: new Set(), idleSince: performance.now(), bytesRead: 0 });
    socket.once('close', () => connections.open.delete(socket));
  });
  if (tls) {
    server.on('connection', (socket: Socket) => {
      connections.handshaking.add(socket);
      socket.once('close', () => connections.handshaking.delete(socket));
      socket.once('secure', () => connections.handshaking.delete(socket));
    });
  }
}

/** Listener.drain, once per listener. */
function drain(server: Server | TlsServer, connections: Connections, timeoutMs: number): Promise<number> {
  return new Promise<number>((resolve) => {
    connections.draining = true;
    // Stops accepting without http.Server's close, which would also close the idle connections at once.
    NetServer.prototype.close.call(server);
    // Answers already on their way but not yet begun end their connection too.
    for (const { answers } of connections.open.values()) for (const res of answers) if (!res.headersSent) endsConnection(res);
    const check = () => {
      closeIdle(connections.open);
      if (connections.open.size === 0) finish();
    };
    // The first look comes a check later: bytes already on the wire when the drain began are read by then.
    const checker = setInterval(check, DRAIN_CHECK_MS);
    const deadline = setTimeout(() => {
      let cut = 0;
      for (const { answers } of connections.open.values()) if (answers.size > 0) cut++;
      server.closeAllConnections();
      finish(cut);
    }, timeoutMs);
    function finish(cut = 0) {
      connections.drained = true;
      for (const socket of connections.handshaking) socket.destroy();
      clearInterval(checker);
      clearTimeout(deadline);
      // Releases what http.Server keeps for its connections (the timeout checker); nothing accepts any more.
      server.close();
      resolve(cut);
    }
    if (connections.open.size === 0) finish();
  });
}

/** Closes the connections idle for DRAIN_IDLE_MS; bytes of a next request count as activity: a request being sent is answered, not reset. */
function closeIdle(open: Map<Socket, Connection>): void {
  const now = performance.now();
  for (const [socket, state] of open) {
    if (state.answers.size > 0) continue;
    if (socket.bytesRead !== state.bytesRead) {
      state.bytesRead = socket.bytesRead;
      state.idleSince = now;
    } else if (now - state.idleSince >= DRAIN_IDLE_MS) {
      socket.destroy();
    }
  }
}

/**
 * Lingering close (as nginx's lingering_close): Node would close the connection as soon as the
 * answer is written, and the client's bytes still arriving would make the kernel reset it, often
 * before the client has read the answer (a streaming client then sees EPIPE, not the 401 or 413).
 * Instead the answer is followed by the end of the gateway's side, and what the client still sends
 * is read and thrown away (by Node's parser, which dumps the rest of the body) until it ends its
 * side, or is silent for `idleMs`, or has sent `bytes` more, or `ms` have passed: then it closes.
 */
function lingerAfter(socket: Socket, limits: ListenerTimeouts['lingering']): void {
  // Node calls destroySoon on the socket once the answer is written (its resOnFinish).
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.writable) this.end();
    const from = this.bytesRead;
    let read = from;
    let quietSince = performance.now();
    const close = () => this.destroy();
    const deadline = setTimeout(close, limits.ms);
    const check = setInterval(
      () => {
        const now = performance.now();
        if (this.bytesRead !== read) {
          read = this.bytesRead;
          quietSince = now;
        }
        if (read - from > limits.bytes || now - quietSince >= limits.idleMs) close();
      },
      Math.max(10, Math.min(LINGER_CHECK_MS, limits.idleMs)),
    );
    this.once('close', () => {
      clearTimeout(deadline);
      clearInterval(check);
    });
    // The client has ended its side too: nothing is left to read.
    this.once('end', close);
  };
}

/** Fails with the reason when the chain and key are not a usable pair (checked before a reload swaps them in). */
export function checkCertificate(files: TlsFiles): void {
  createSecureContext(secureContext(files));
}
