// RFC 8705 §2.1.2: a registered subject DN (RFC 4514) against a certificate's, as Node prints it,
// and the subjectAltName entries; certificates made by openssl.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { certificateMatches, parseDn } from '../../src/oauth/mtls.ts';
import { thumbprintOf } from '../../src/http/client-certificate.ts';
import { tempDir } from '../helpers.ts';

describe('certificate subjects', () => {
  const temp = tempDir();
  after(() => temp.remove());
  const subjectOf = (subject: string, san: string) => {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '2', '-subj', subject, '-addext', `subjectAltName=${san}`],
      { cwd: temp.dir, stdio: 'pipe' },
    );
    const x509 = new X509Certificate(readFileSync(path.join(temp.dir, 'c.pem')));
    return { x509, thumbprint: thumbprintOf(x509), chained: true };
  };

  test('a DN in RFC 4514 order matches the certificate whatever the spacing, the case of types and values, hex escapes and the order within a multi-valued RDN', () => {
    const cert = subjectOf('/C=US/O=Example, Inc./OU=a+OU=b/CN=orders client', 'DNS:orders.example.com,IP:10.0.0.1,email:ops@example.com,URI:spiffe://example.com/orders');
    const now = Date.now();
    const dn = (value: string) => certificateMatches({ method: 'tls_client_auth', subject: { dn: value } }, cert, now);
    assert.equal(dn('CN=orders client,OU=a+OU=b,O=Example\\, Inc.,C=US'), true);
    assert.equal(dn('cn = ORDERS CLIENT , ou=b+ou=a, o=Example\\2C Inc., c=us'), true);
    assert.equal(dn('CN=orders client,OU=a,O=Example\\, Inc.,C=US'), false, 'one value of the multi-valued RDN missing');
    assert.equal(dn('C=US,O=Example\\, Inc.,OU=a+OU=b,CN=orders client'), false, 'the other end first');
    assert.equal(dn('CN=orders client'), false);
    const san = (kind: 'dns' | 'ip' | 'email' | 'uri', value: string) => certificateMatches({ method: 'tls_client_auth', subject: { san: kind, value } }, cert, now);
    assert.deepEqual(
      [san('dns', 'orders.example.com'), san('dns', 'ORDERS.example.com'), san('ip', '10.0.0.1'), san('email', 'ops@example.com'), san('uri', 'spiffe://example.com/orders')],
      [true, true, true, true, true],
    );
    assert.deepEqual(
      [san('dns', 'other.example.com'), san('ip', '10.0.0.2'), san('email', 'dev@example.com'), san('uri', 'spiffe://example.com/other'), san('dns', 'orders client')],
      [false, false, false, false, false],
    );
    // Signed by no CA the gateway trusts: never tls_client_auth, however it is named.
    assert.equal(certificateMatches({ method: 'tls_client_auth', subject: { dn: 'CN=orders client,OU=a+OU=b,O=Example\\, Inc.,C=US' } }, { ...cert, chained: false }, now), false);
  });

  test('parseDn refuses what is not a DN', () => {
    for (const text of ['', 'CN', '=x', 'CN=a,', 'CN=a\\']) assert.equal(parseDn(text, ','), undefined, text);
  });
});
