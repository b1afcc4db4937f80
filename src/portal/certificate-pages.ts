// An app's client certificates (RFC 8705 §2.2, self_signed_tls_client_auth) on its page: the ones it
// registered, by thumbprint, subject and expiry, the form that adds one, and the page that confirms
// a removal. What an operator registered for it (tls_client_auth, §2.1) is shown, not changed.
import { MAX_CERTIFICATES } from '../admin/app-certificates.ts';
import type { App, CertificateSubject, RegisteredCertificate } from '../store/port/index.ts';
import { html, type Html } from '../html.ts';
import { csrfField, dateTime, layout, problem, type Frame } from './pages.ts';

/** What the section shows besides the app: whether the gateway takes client certificates at all, and the form as typed with its error. */
export interface CertificateView {
  app: App;
  now: number;
  /** listen.tls.clientCa or listen.clientCertificateHeader: without either, no token request can present a certificate. */
  takesCertificates: boolean;
  typed?: { text: string; error: string } | undefined;
}

/** The certificates the developer registered; none when the app does not use them, or the API team registered a subject instead. */
export const registeredCertificates = (app: App): readonly RegisteredCertificate[] => (app.certificateAuth?.method === 'self_signed_tls_client_auth' ? app.certificateAuth.certificates : []);

const EXPLAINED = html`<p>Once a certificate is registered, the app authenticates at the token endpoint by presenting it (mutual TLS) and sending its key as <code>client_id</code> in the form, with no secret: its secret no longer works. Tokens requested that way are bound to the certificate, and removing every certificate gives the secret back.</p>`;

const SAN_NAMES = { dns: 'DNS name', uri: 'URI', ip: 'IP address', email: 'email address' } as const;

const subjectOf = (subject: CertificateSubject) => ('dn' in subject ? html`the subject <code>${subject.dn}</code>` : html`the ${SAN_NAMES[subject.san]} <code>${subject.value}</code>`);

const expiry = (c: RegisteredCertificate, now: number) => (c.expiresAt === null ? 'not known' : c.expiresAt <= now ? `expired ${dateTime(c.expiresAt)}` : dateTime(c.expiresAt));

/** Registered by thumbprint alone (by an operator): nothing else is known of it. */
const subjectText = (c: RegisteredCertificate) => (c.subject === '' ? 'not known (registered by its thumbprint)' : c.subject);

const removePath = (app: App, c: RegisteredCertificate) => `/apps/${app.id}/certificates/${c.thumbprint}/remove`;

export function certificatesSection(view: CertificateView, frame: Frame): Html {
  const { app, now, takesCertificates } = view;
  const auth = app.certificateAuth;
  // Nothing to show or change; a refused POST still says why.
  if (auth === undefined && !takesCertificates) return html`${problem(view.typed?.error)}`;
  if (app.type === 'public') {
    return html`<h2>Client certificate</h2>
<p>A public app has no secret, so it registers no certificate: a token it requests over a connection with a client certificate is bound to that certificate.</p>
${problem(view.typed?.error)}`;
  }
  if (auth?.method === 'tls_client_auth') {
    return html`<h2>Client certificate</h2>
<p id="certificate-by-operator">Registered by the API team: the app authenticates at the token endpoint with a certificate from the gateway's certificate authority naming ${subjectOf(auth.subject)}, and sends its key as <code>client_id</code> with no secret: its secret no longer works. Tokens requested that way are bound to the certificate. Ask the API team to change it.</p>
${problem(view.typed?.error)}`;
  }
  const certificates = registeredCertificates(app);
  const editable = app.status === 'active';
  return html`<h2>Client certificates</h2>
${EXPLAINED}
${
  certificates.length === 0
    ? html`<p>None registered: the app authenticates with its secret.</p>`
    : html`<table class="reflow certificates" id="certificates">
<thead><tr><th>Thumbprint (SHA-256)</th><th>Subject</th><th>Expires</th><th><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>
${certificates.map(
  (c) =>
    html`<tr><td data-label="Thumbprint"><code>${c.thumbprint}</code></td><td data-label="Subject">${subjectText(c)}</td><td data-label="Expires">${expiry(c, now)}</td><td>${
      editable ? html`<a class="button danger" href="${removePath(app, c)}">Remove&hellip;</a>` : ''
    }</td></tr>`,
)}
</tbody>
</table>`
}
${takesCertificates ? '' : html`<p>The gateway takes no client certificates at the moment: until they are removed, the app cannot get tokens.</p>`}
${editable && takesCertificates ? addForm(view, frame, certificates.length) : problem(view.typed?.error)}`;
}

function addForm(view: CertificateView, frame: Frame, count: number): Html {
  if (count >= MAX_CERTIFICATES) return html`<p>An app has at most ${MAX_CERTIFICATES} certificates: remove one to add another.</p>${problem(view.typed?.error)}`;
  return html`<form method="post" action="/apps/${view.app.id}/certificates" class="stack wide" id="certificate-form">
  ${csrfField(frame)}
  ${problem(view.typed?.error)}
  <label>${count === 0 ? 'Certificate' : 'Another certificate'} (PEM) <span class="hint">Paste the certificate, from <code>-----BEGIN CERTIFICATE-----</code> to <code>-----END CERTIFICATE-----</code>, never its private key. ${
    count === 0 ? '' : 'Adding one keeps the others, so the app can move to the new one before you remove the old.'
  }</span>
    <textarea name="certificate" rows="8" required spellcheck="false" autocapitalize="off" autocomplete="off">${view.typed?.text ?? ''}</textarea></label>
  <button type="submit">Register the certificate</button>
</form>`;
}

/** Confirms the removal of one certificate, saying what the app authenticates with afterwards. */
export function removeCertificatePage(frame: Frame, app: App, certificate: RegisteredCertificate, now: number): Html {
  const last = registeredCertificates(app).length === 1;
  return layout(
    frame,
    `Remove a certificate of ${app.name}`,
    html`<h1>Remove a certificate of <q>${app.name}</q>?</h1>
<dl class="facts">
  <dt>Thumbprint</dt><dd><code>${certificate.thumbprint}</code></dd>
  <dt>Subject</dt><dd>${subjectText(certificate)}</dd>
  <dt>Expires</dt><dd>${expiry(certificate, now)}</dd>
</dl>
<p>${last ? 'It is the only certificate of the app: once it is removed, the app authenticates with its secret again.' : 'The app can no longer authenticate with it; its other certificates keep working.'}</p>
<form method="post" action="${removePath(app, certificate)}" class="actions">${csrfField(frame)}<button type="submit" class="danger">Remove the certificate</button> <a href="/apps/${app.id}">Cancel</a></form>`,
  );
}
