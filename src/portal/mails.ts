// The messages the portal mails: plain text, each link on a line of its own. They tell the reader
// what to do if they did not ask, because anyone can type someone else's address into a form.
import type { Message } from '../mail.ts';

export function confirmationMail(title: string, to: string, link: string): Message {
  return {
    to,
    subject: `Confirm your email address for ${title}`,
    text: `Someone, probably you, signed up to ${title} with this address.

To confirm it, open this link within 24 hours and log in with the password you chose:

${link}

Until the address is confirmed, the account cannot register apps.

If it was not you, ignore this message: the link is of no use without that password.
`,
  };
}

export function accountExistsMail(title: string, to: string, forgotLink: string): Message {
  return {
    to,
    subject: `Sign-up attempt at ${title}`,
    text: `Someone, perhaps you, tried to sign up to ${title} with this address, which already has an account. Nothing was changed.

If it was you, log in with your password. If you have forgotten it, set a new one here:

${forgotLink}

If it was not you, ignore this message.
`,
  };
}

export function resetMail(title: string, to: string, link: string): Message {
  return {
    to,
    subject: `Set a new password for ${title}`,
    text: `Someone, probably you, asked to set a new password for your account at ${title}.

To set it, open this link within 1 hour:

${link}

Setting a new password logs you out everywhere. If you did not ask, ignore this message: your password stays as it is.
`,
  };
}
