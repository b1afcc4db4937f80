// IP addresses and CIDR ranges, and the client address a request is judged by.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** Parses "a.b.c.d", "a.b.c.d/n", "x::y" or "x::y/n"; undefined when it is none of them. */
export function parseEntry(entry: string): { address: string; family: 'ipv4' | 'ipv6'; prefix: number } | undefined {
  const [address = '', bits, ...rest] = entry.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^[0-9]{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { address, family: version === 4 ? 'ipv4' : 'ipv6', prefix };
}

/** A BlockList of the entries, checked with the client address as the socket reports it. */
export function addressSet(entries: readonly string[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const e = parseEntry(entry)!;
    list.addSubnet(e.address, e.prefix, e.family);
  }
  return (ip) => {
    const version = isIP(ip);
    return version !== 0 && list.check(ip, version === 4 ? 'ipv4' : 'ipv6');
  };
}

/**
 * The network a client is counted by where one host may hold many addresses: an IPv6 address's
 * /64 (its first four groups; a host is commonly given one whole), an IPv4 address itself.
 */
export function hostNetwork(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const [head = '', tail] = ip.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...new Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** The peer's address, with IPv4-mapped IPv6 addresses shown as IPv4. */
export function peerAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** The address of an X-Forwarded-For hop, which some proxies write as a.b.c.d:port or [v6]:port. */
function hopAddress(hop: string): string {
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::[0-9]+)?$/.exec(hop);
  if (bracketed) return peerAddress(bracketed[1]!);
  const v4port = /^([0-9.]+):[0-9]+$/.exec(hop);
  return peerAddress(v4port ? v4port[1]! : hop);
}

/** Stands for a client whose address could not be read: no list matches it. */
export const UNKNOWN_CLIENT = 'unknown';

/**
 * The client address: the socket's peer; or, when the peer is a trusted proxy, the right-most
 * address of X-Forwarded-For that is not itself a trusted proxy (the left part of the header is
 * whatever the client wrote, so it is never believed). A hop that is not an address makes the
 * client unknown, which no allow list admits.
 */
export function createClientIp(trustedProxies: readonly string[]): (req: IncomingMessage) => string {
  if (trustedProxies.length === 0) return (req) => peerAddress(req.socket.remoteAddress ?? '');
  const trusted = addressSet(trustedProxies);
  return function clientIp(req) {
    let ip = peerAddress(req.socket.remoteAddress ?? '');
    if (!trusted(ip)) return ip;
    const header = req.headers['x-forwarded-for'];
    if (header === undefined) return ip;
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hopAddress(hops[i]!.trim());
      if (isIP(hop) === 0) return UNKNOWN_CLIENT;
      ip = hop;
      if (!trusted(hop)) return hop;
    }
    return ip;
  };
}

/** Whether the request came straight from one of the trusted proxies (its forwarding headers may be believed). */
export function createTrustedPeer(trustedProxies: readonly string[]): (req: IncomingMessage) => boolean {
  if (trustedProxies.length === 0) return () => false;
  const trusted = addressSet(trustedProxies);
  return (req) => trusted(peerAddress(req.socket.remoteAddress ?? ''));
}
