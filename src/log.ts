import { pino, type Logger } from 'pino';

// Defence in depth: nothing logs these fields on purpose, and if something ever does they are censored.
const REDACT = [
  'authorization',
  'password',
  'secret',
  'client_secret',
  'access_token',
  'refresh_token',
  '*.authorization',
  '*.password',
  '*.secret',
  '*.client_secret',
  '*.access_token',
  '*.refresh_token',
  'req.headers.authorization',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, redact: { paths: REDACT, censor: '[redacted]' }, base: null };
  return destination === undefined ? pino(options) : pino(options, destination as never);
}
