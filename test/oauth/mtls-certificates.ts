// Certificates for the mutual TLS tests, made by the openssl command: a CA that signs the
// gateway's own certificate and its clients', client certificates it signs, and self-signed ones.
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';

export interface Pair {
  cert: string;
  key: string;
  /** The certificate's PEM text. */
  pem: string;
  /** x5t#S256: what a token bound to it names. */
  thumbprint: string;
}

export interface Certificates {
  /** The CA's PEM file: listen.tls.clientCa, and what clients trust the gateway by. */
  ca: string;
  /** The gateway's certificate, for localhost and 127.0.0.1. */
  server: Pair;
  /** A client certificate the CA signs, with this subject (openssl's /A=b/C=d form) and subjectAltName. */
  signed(name: string, subject: string, san?: string): Pair;
  /** A self-signed client certificate. */
  selfSigned(name: string, subject: string): Pair;
}

export function makeCertificates(dir: string): Certificates {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const pair = (name: string): Pair => {
    const pem = readFileSync(path.join(dir, `${name}.crt`), 'utf8');
    return { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`), pem, thumbprint: createHash('sha256').update(new X509Certificate(pem).raw).digest('base64url') };
  };
  let serial = 1;
  const signed = (name: string, subject: string, san?: string): Pair => {
    openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    const ext = path.join(dir, `${name}.ext`);
    writeFileSync(ext, san === undefined ? 'basicConstraints=CA:FALSE\n' : `basicConstraints=CA:FALSE\nsubjectAltName=${san}\n`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', String(serial++), '-days', '2', '-extfile', ext, '-out', `${name}.crt`);
    return pair(name);
  };
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=mutual TLS test CA');
  return {
    ca: path.join(dir, 'ca.crt'),
    server: signed('server', '/CN=localhost', 'DNS:localhost,IP:127.0.0.1'),
    signed,
    selfSigned(name, subject) {
      openssl('req', '-x509', ...ec, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', subject);
      return pair(name);
    },
  };
}

export interface Exchange {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer read by property.
  body: any;
}

/** One request on a connection of its own (https: with the TLS options given, a client certificate among them), its answer read as JSON when it is. */
export function exchange(url: string, options: RequestOptions & { ca?: Buffer; cert?: Buffer; key?: Buffer }, body?: string): Promise<Exchange> {
  const send = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { agent: false, ...options }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
