// The network a client is counted by where one host may hold many addresses (the portal's mail
// throttle): an IPv6 address's /64, however it is written; an IPv4 address itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostNetwork } from '../../src/http/ip.ts';

test("an IPv6 address's /64 whatever its spelling; an IPv4 address as it is", () => {
  assert.deepEqual(
    ['2001:db8:77:1::1', '2001:0db8:0077:0001:ffff:ffff:ffff:ffff', '2001:db8::1', '::1', 'fe80::1:2:3:4', '64:ff9b::192.0.2.1', '2001:db8:77:1:2:3:4:5', '192.0.2.7', 'unknown'].map(hostNetwork),
    ['2001:db8:77:1::/64', '2001:db8:77:1::/64', '2001:db8:0:0::/64', '0:0:0:0::/64', 'fe80:0:0:0::/64', '64:ff9b:0:0::/64', '2001:db8:77:1::/64', '192.0.2.7', 'unknown'],
  );
});
