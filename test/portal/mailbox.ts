// A real SMTP server in the test process (smtp-server on port 0) that keeps what it receives, for
// the tests that follow the portal's mailed links. No `.test` suffix: the runner must not run it.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { Visitor } from './visitor.ts';

export interface Mail {
  to: string[];
  subject: string;
  text: string;
}

export interface Mailbox {
  port: number;
  /** Every message received, in order. */
  received: Mail[];
  /** The first message to `to` not taken yet; waits for it if none has arrived. */
  next(to: string): Promise<Mail>;
  /** The `mail:` section of a gateway config that sends here. */
  yaml: string;
  close(): Promise<void>;
}

/** RFC 2045 §6.7: quoted-printable, as nodemailer writes long lines. */
function decodeQuotedPrintable(body: string): string {
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parse(raw: string, to: string[]): Mail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1] ?? '';
  const text = /quoted-printable/i.test(header('Content-Transfer-Encoding')) ? decodeQuotedPrintable(body) : body;
  return { to, subject: header('Subject'), text: text.replace(/\r\n/g, '\n') };
}

export async function startMailbox(): Promise<Mailbox> {
  const received: Mail[] = [];
  const taken = new Set<Mail>();
  const waiting: { to: string; resolve: (mail: Mail) => void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail = parse(
          Buffer.concat(chunks).toString('latin1'),
          session.envelope.rcptTo.map((r) => r.address),
        );
        received.push(mail);
        const waiter = waiting.findIndex((w) => mail.to.includes(w.to));
        if (waiter !== -1) {
          taken.add(mail);
          waiting.splice(waiter, 1)[0]!.resolve(mail);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    next(to) {
      const mail = received.find((m) => !taken.has(m) && m.to.includes(to));
      if (mail !== undefined) {
        taken.add(mail);
        return Promise.resolve(mail);
      }
      return new Promise((resolve) => waiting.push({ to, resolve }));
    },
    yaml: `mail:\n  from: Test portal <portal@example.com>\n  smtp: { host: 127.0.0.1, port: ${port}, allowPlaintext: true }\n`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The path and query of the first link in a message that starts with `origin`. */
export function linkIn(mail: Mail, origin: string): string {
  const found = mail.text.split('\n').find((line) => line.startsWith(origin));
  if (found === undefined) throw new Error(`no link to ${origin} in:\n${mail.text}`);
  return found.slice(origin.length);
}

/**
 * Signs up through the portal and confirms the address with the mailed link, as a developer
 * would. The sign-up comes from `clientIp` (X-Forwarded-For, for a gateway that trusts 127.0.0.1),
 * as sign-ups are throttled per address.
 */
export async function signUpAndConfirm(base: string, mailbox: Mailbox, input: { email: string; name: string; password: string; clientIp?: string }): Promise<{ visitor: Visitor; email: string }> {
  const visitor = new Visitor(base);
  const form = await visitor.get('/signup');
  const headers = input.clientIp === undefined ? {} : { 'x-forwarded-for': input.clientIp };
  const page = await visitor.post('/signup', { csrf: form.csrf!, email: input.email, name: input.name, password: input.password }, headers);
  assert.equal(page.status, 200, page.text);
  assert.match(page.text, /<h1>Check your email<\/h1>/);
  const link = linkIn(await mailbox.next(input.email), base.replace('127.0.0.1', 'localhost'));
  const token = new URLSearchParams(link.split('?')[1]).get('token')!;
  const confirmed = await visitor.submit(link, '/verify', { token, email: input.email, password: input.password });
  assert.equal(confirmed.status, 303, confirmed.text);
  assert.equal(confirmed.headers.get('location'), '/apps?done=verified');
  return { visitor, email: input.email };
}
