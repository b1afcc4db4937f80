// The account pages: log in and out, sign up (open or with an invitation), confirm the address,
// forgotten password and reset, and the password change of a logged-in developer.
import { acceptInvitation, changePassword, confirmEmail, logIn, openSignUp, requestConfirmationLink, requestPasswordReset, resetPassword } from '../admin/accounts.ts';
import { audit } from '../admin/audit.ts';
import { deliver, developerOf, loggedIn, mailLink, notFound, page, refused, type Answer, type PortalContext, type Request } from './context.ts';
import * as mails from './mails.ts';
import * as pages from './pages.ts';
import { newVisitorId } from './session.ts';

export const loginPage = async (_ctx: PortalContext, r: Request) =>
  page(200, pages.loginPage(r.frame, r.query.get('done') === 'password' ? { notice: 'Your password was changed: log in again.' } : {}));

// An invitation link carries the email and the code: /signup?email=…&invitation=gwi_…
export const signupPage = async (_ctx: PortalContext, r: Request) => page(200, pages.signupPage(r.frame, { email: r.query.get('email') ?? '', invitation: r.query.get('invitation') ?? '' }));

export const forgotPage = async (_ctx: PortalContext, r: Request) => page(200, pages.forgotPage(r.frame, {}));

// The links mailed carry their token; the pages only fill it into a form, which spends it when sent.
export const verifyPage = async (_ctx: PortalContext, r: Request) => page(200, pages.verifyPage(r.frame, { token: r.query.get('token') ?? '' }));
export const resetPage = async (_ctx: PortalContext, r: Request) => page(200, pages.resetPage(r.frame, { token: r.query.get('token') ?? '' }));

export const accountPage = async (_ctx: PortalContext, r: Request) => page(200, pages.accountPage(r.frame, r.query.get('done') === 'password' ? { notice: 'Your password is changed.' } : {}));

export async function logInForm(ctx: PortalContext, r: Request): Promise<Answer> {
  const email = r.form.get('email') ?? '';
  try {
    return await loggedIn(ctx, await logIn(ctx.deps, { email, password: r.form.get('password') ?? '', clientIp: r.clientIp }), '/apps');
  } catch (err) {
    return refused(err, (error) => pages.loginPage(r.frame, { email, error }));
  }
}

export async function signUpForm(ctx: PortalContext, r: Request): Promise<Answer> {
  const input = { email: r.form.get('email') ?? '', name: r.form.get('name') ?? '', password: r.form.get('password') ?? '', invitation: r.form.get('invitation')?.trim() ?? '' };
  try {
    if (input.invitation !== '') return await loggedIn(ctx, await acceptInvitation(ctx.deps, { ...input, clientIp: r.clientIp }), '/apps');
    const result = await openSignUp(ctx.deps, { ...input, clientIp: r.clientIp });
    // The same page whether the address was free or taken; only the mail differs, and only its owner reads it.
    deliver(
      ctx,
      result.kind === 'created'
        ? mails.confirmationMail(ctx.portal.title, result.developer.email, mailLink(ctx, '/verify', result.token))
        : mails.accountExistsMail(ctx.portal.title, result.developer.email, `${ctx.origins.publicUrl}/forgot`),
    );
    return page(200, pages.checkEmailPage(r.frame, 'signup'));
  } catch (err) {
    return refused(err, (error) => pages.signupPage(r.frame, { email: input.email, name: input.name, invitation: input.invitation, error }));
  }
}

export async function verifyForm(ctx: PortalContext, r: Request): Promise<Answer> {
  const token = r.form.get('token') ?? '';
  const email = r.form.get('email') ?? '';
  try {
    return await loggedIn(ctx, await confirmEmail(ctx.deps, { token, email, password: r.form.get('password') ?? '', clientIp: r.clientIp }), '/apps?done=verified');
  } catch (err) {
    return refused(err, (error) => pages.verifyPage(r.frame, { token, email, error }));
  }
}

/** The form that asks for a new confirmation link: there is none to ask for unless anyone may sign up. */
export const resendPage = async (ctx: PortalContext, r: Request) => (ctx.portal.signup === 'open' ? page(200, pages.resendPage(r.frame, {})) : notFound(r));

/**
 * A new confirmation link, or for a confirmed address the notice a sign-up sends: the answer is
 * sent first and is the same either way, as for a reset request; the mail throttle counts it like a sign-up.
 */
export async function resendForm(ctx: PortalContext, r: Request): Promise<Answer> {
  if (ctx.portal.signup !== 'open') return notFound(r);
  const email = r.form.get('email') ?? '';
  try {
    const { later } = await requestConfirmationLink(ctx.deps, { email, clientIp: r.clientIp });
    setImmediate(() => {
      later()
        .then((found) =>
          deliver(
            ctx,
            found &&
              (found.kind === 'link'
                ? mails.confirmationMail(ctx.portal.title, found.developer.email, mailLink(ctx, '/verify', found.token))
                : mails.accountExistsMail(ctx.portal.title, found.developer.email, `${ctx.origins.publicUrl}/forgot`)),
          ),
        )
        .catch((err: unknown) => ctx.services.logger.error({ err }, 'confirmation link not made'));
    });
    return page(200, pages.checkEmailPage(r.frame, 'resend'));
  } catch (err) {
    return refused(err, (error) => pages.resendPage(r.frame, { email, error }));
  }
}

export async function forgotForm(ctx: PortalContext, r: Request): Promise<Answer> {
  const email = r.form.get('email') ?? '';
  try {
    const { later } = await requestPasswordReset(ctx.deps, { email, clientIp: r.clientIp });
    // Nothing is mailed for an address without an account; the answer is the same, and is
    // sent before the account is looked up, so that it takes as long either way.
    setImmediate(() => {
      later()
        .then((reset) => deliver(ctx, reset && mails.resetMail(ctx.portal.title, reset.developer.email, mailLink(ctx, '/reset', reset.token))))
        .catch((err: unknown) => ctx.services.logger.error({ err }, 'password reset link not made'));
    });
    return page(200, pages.checkEmailPage(r.frame, 'reset'));
  } catch (err) {
    return refused(err, (error) => pages.forgotPage(r.frame, { email, error }));
  }
}

export async function resetForm(ctx: PortalContext, r: Request): Promise<Answer> {
  const token = r.form.get('token') ?? '';
  try {
    await resetPassword(ctx.deps, { token, password: r.form.get('password') ?? '', clientIp: r.clientIp });
  } catch (err) {
    return refused(err, (error) => pages.resetPage(r.frame, { token, error }));
  }
  return { redirect: '/login?done=password' };
}

export async function logOut(ctx: PortalContext, r: Request): Promise<Answer> {
  await ctx.sessions.end(r.visitor.id);
  const dev = r.visitor.developer;
  // Sessions are the portal's, not src/admin's: the line is written here. A visitor without a session ended nothing.
  if (dev !== undefined) audit(ctx.services.logger, 'developer.logout', { actor: { kind: 'developer', id: dev.id, email: dev.email }, developer: { id: dev.id, email: dev.email } });
  return { redirect: '/', cookies: [ctx.sessions.cookie(newVisitorId())] };
}

export async function passwordForm(ctx: PortalContext, r: Request): Promise<Answer> {
  try {
    const login = await changePassword(ctx.deps, developerOf(r), { current: r.form.get('current') ?? '', next: r.form.get('next') ?? '' });
    // Every session ended; this browser starts a new one.
    return { ...(await loggedIn(ctx, login, '/account')), redirect: '/account?done=password' };
  } catch (err) {
    return refused(err, (error) => pages.accountPage(r.frame, { error }));
  }
}
