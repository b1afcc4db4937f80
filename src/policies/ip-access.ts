// IP access list: allow and deny lists of IPv4 and IPv6 addresses and CIDR ranges.
// Precedence: an address on the deny list is refused; then, if there is an allow list, only the
// addresses on it pass. IPv4-mapped IPv6 clients (::ffff:a.b.c.d) match IPv4 entries.
import { Type } from '@sinclair/typebox';
import { about, Strict } from '../fragments.ts';
import { GatewayError } from '../errors.ts';
import { addressSet, parseEntry } from '../http/ip.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { PolicyIssue, RequestPolicy } from './policy.ts';

const Entries = Type.Array(Type.String({ minLength: 1 }), { minItems: 1 });
const IpAccessOptions = Type.Object(
  {
    allow: Type.Optional(about(Entries, 'Only calls from these addresses or CIDR ranges pass.')),
    deny: Type.Optional(about(Entries, 'Calls from these addresses or CIDR ranges get 403, even when allowed.')),
  },
  { ...Strict, minProperties: 1 },
);

export const ipAccess: RequestPolicy<typeof IpAccessOptions> = {
  phase: 'access',
  schema: IpAccessOptions,
  tokenEndpoint: () => true,
  check(options) {
    const issues: PolicyIssue[] = [];
    for (const list of ['allow', 'deny'] as const) {
      options[list]?.forEach((entry, i) => {
        if (parseEntry(entry) === undefined) issues.push({ path: [list, i], message: `"${entry}" is not an IP address or CIDR range` });
      });
    }
    return issues;
  },
  create(options) {
    const denied = options.deny === undefined ? undefined : addressSet(options.deny);
    const allowed = options.allow === undefined ? undefined : addressSet(options.allow);
    return function ipAccess(ctx: RequestContext): void {
      if (denied?.(ctx.clientIp) === true || (allowed !== undefined && !allowed(ctx.clientIp))) {
        throw new GatewayError(403, 'ip_denied', 'calls from this address are not allowed', { policy: 'ipAccess' });
      }
    };
  },
};
