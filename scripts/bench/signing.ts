// Signing and verifying one access token, per algorithm, with the two JOSE libraries the design
// allows: jose (WebCrypto, asynchronous) and fast-jwt (node:crypto, synchronous). The gateway signs
// with fast-jwt, on the token endpoint's path, and verifies with jose, once per token (the
// verified token is remembered by its string).
import { keep } from './results.ts';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createSigner, createVerifier, type Algorithm } from 'fast-jwt';
import { jwtVerify, SignJWT } from 'jose';

const CLAIMS = {
  iss: 'https://api.example.com',
  sub: 'Zt3kYb0qv8WQ2mX5cJ7nR1pL4sD6fH9a',
  aud: 'bench',
  client_id: 'Zt3kYb0qv8WQ2mX5cJ7nR1pL4sD6fH9a',
  scope: 'bench:read bench:write',
  jti: 'A'.repeat(64),
  app: 'bench',
  product: 'bench',
};

const PAIRS: Record<string, () => { publicKey: KeyObject; privateKey: KeyObject }> = {
  ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  EdDSA: () => generateKeyPairSync('ed25519'),
  RS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
};

/** Microseconds per call of `op`, the median of three runs of `n`. */
async function perCall(n: number, op: () => unknown): Promise<number> {
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) {
    const started = performance.now();
    for (let i = 0; i < n; i++) await op();
    runs.push(((performance.now() - started) * 1000) / n);
  }
  return runs.sort((a, b) => a - b)[1]!;
}

export async function signingLines(n = 1000): Promise<string[]> {
  const title = 'one access token, µs per call';
  const lines = [`${title.padEnd(43)}jose sign  fast-jwt sign  jose verify  fast-jwt verify`];
  const kept: Record<string, Record<string, number>> = {};
  for (const [alg, pair] of Object.entries(PAIRS)) {
    const { publicKey, privateKey } = pair();
    const now = Math.floor(Date.now() / 1000);
    const claims = { ...CLAIMS, iat: now, exp: now + 3600 };
    const header = { alg, typ: 'at+jwt', kid: 'k' };
    const fastSign = createSigner({ key: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, algorithm: alg as Algorithm, header });
    const fastVerify = createVerifier({ key: publicKey.export({ format: 'pem', type: 'spki' }) as string, algorithms: [alg as Algorithm], cache: false });
    const token = fastSign(claims);
    const figures = [
      await perCall(n, () => new SignJWT(claims).setProtectedHeader(header).sign(privateKey)),
      await perCall(n, () => fastSign(claims)),
      await perCall(n, () => jwtVerify(token, publicKey, { algorithms: [alg], typ: 'at+jwt' })),
      await perCall(n, () => fastVerify(token)),
    ];
    lines.push(`  ${alg.padEnd(40)}${figures.map((f) => f.toFixed(0).padStart(9)).join('      ')}`);
    const [joseSign, fastSign_, joseVerify, fastVerify_] = figures.map((f) => Math.round(f));
    kept[alg] = { 'jose sign': joseSign!, 'fast-jwt sign': fastSign_!, 'jose verify': joseVerify!, 'fast-jwt verify': fastVerify_! };
  }
  keep(title, kept);
  return lines;
}
