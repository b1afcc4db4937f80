// Outgoing mail: the portal's confirmation and password-reset links. One transport, chosen by the
// config's `mail` section: an SMTP server (nodemailer), or the gateway's own log, which, like
// Django's console email backend, is for development only: the links it writes open accounts.
import { readFileSync } from 'node:fs';
import { createTransport } from 'nodemailer';
import type { Logger } from 'pino';
import type { MailSettings } from './config/load.ts';

export interface Message {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Resolves once the transport has accepted the message. */
  send(message: Message): Promise<void>;
  close(): void;
}

const TIMEOUT_MS = 10_000;

export function createMailer(settings: MailSettings, logger: Logger): Mailer {
  if (settings.kind === 'log') {
    return {
      async send(message) {
        logger.info({ mail: { from: settings.from, ...message } }, 'mail (log transport: not sent)');
      },
      close() {},
    };
  }
  const transport = createTransport({
    host: settings.host,
    port: settings.port,
    secure: settings.secure,
    // Without implicit TLS, STARTTLS is demanded unless plaintext was explicitly allowed: the
    // messages carry links that open accounts, and `auth` a password.
    requireTLS: !settings.secure && !settings.allowPlaintext,
    ...(settings.auth === undefined ? {} : { auth: { user: settings.auth.user, pass: settings.auth.pass } }),
    ...(settings.ca === undefined ? {} : { tls: { ca: readFileSync(settings.ca) } }),
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  });
  return {
    async send(message) {
      await transport.sendMail({ from: settings.from, to: message.to, subject: message.subject, text: message.text });
    },
    close: () => transport.close(),
  };
}
