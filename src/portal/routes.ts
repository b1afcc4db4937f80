// The portal's route table: every page and form, who may open it, and the handler that answers.
// Exact paths are found first, then the patterns in the order below; a path with no row is not found.
import * as account from './account.ts';
import * as apps from './apps.ts';
import { assetRoutes } from './assets.ts';
import type { PortalRoute } from './context.ts';
import { RESEND_PATH } from './pages.ts';
import * as products from './products.ts';

export function portalRoutes(): PortalRoute[] {
  return [
    ...assetRoutes(),
    { method: 'GET', path: '/', access: 'anyone', handler: products.productsPage },
    { method: 'GET', path: products.PRODUCT, access: 'anyone', handler: products.productPage },
    { method: 'GET', path: products.REFERENCE, access: 'anyone', handler: products.referencePage },
    { method: 'GET', path: products.OPENAPI_FILE, access: 'anyone', handler: products.openApiFile },

    { method: 'GET', path: '/login', access: 'anyone', handler: account.loginPage },
    { method: 'POST', path: '/login', access: 'anyone', handler: account.logInForm },
    { method: 'GET', path: '/signup', access: 'anyone', handler: account.signupPage },
    { method: 'POST', path: '/signup', access: 'anyone', handler: account.signUpForm },
    { method: 'GET', path: RESEND_PATH, access: 'anyone', mail: true, handler: account.resendPage },
    { method: 'POST', path: RESEND_PATH, access: 'anyone', mail: true, handler: account.resendForm },
    { method: 'GET', path: '/verify', access: 'anyone', mail: true, handler: account.verifyPage },
    { method: 'POST', path: '/verify', access: 'anyone', mail: true, handler: account.verifyForm },
    { method: 'GET', path: '/forgot', access: 'anyone', mail: true, handler: account.forgotPage },
    { method: 'POST', path: '/forgot', access: 'anyone', mail: true, handler: account.forgotForm },
    { method: 'GET', path: '/reset', access: 'anyone', mail: true, handler: account.resetPage },
    { method: 'POST', path: '/reset', access: 'anyone', mail: true, handler: account.resetForm },
    { method: 'POST', path: '/logout', access: 'anyone', handler: account.logOut },
    { method: 'GET', path: '/account', access: 'developer', handler: account.accountPage },
    { method: 'POST', path: '/account/password', access: 'developer', handler: account.passwordForm },

    { method: 'GET', path: '/apps', access: 'developer', handler: apps.appsPage },
    { method: 'POST', path: '/apps', access: 'developer', handler: apps.registerForm },
    { method: 'GET', path: '/apps/new', access: 'developer', handler: apps.newAppPage },
    { method: 'GET', path: apps.APP, access: 'developer', handler: apps.appPage },
    { method: 'GET', path: apps.APP_DELETE, access: 'developer', handler: apps.deletePage },
    { method: 'GET', path: apps.APP_SECRET, access: 'developer', handler: apps.secretPage },
    { method: 'GET', path: apps.APP_ANALYTICS, access: 'developer', handler: apps.analyticsPage },
    { method: 'POST', path: apps.APP_ROTATE, access: 'developer', handler: apps.rotateForm },
    { method: 'POST', path: apps.APP_REDIRECT_URIS, access: 'developer', handler: apps.redirectUrisForm },
    { method: 'POST', path: apps.APP_DELETE, access: 'developer', handler: apps.deleteForm },
    { method: 'GET', path: apps.KEY_REVOKE, access: 'developer', handler: apps.revokePage },
    { method: 'POST', path: apps.KEY_REVOKE, access: 'developer', handler: apps.revokeForm },
    { method: 'POST', path: apps.APP_CERTIFICATES, access: 'developer', handler: apps.certificateForm },
    { method: 'GET', path: apps.CERTIFICATE_REMOVE, access: 'developer', handler: apps.removeCertificatePage },
    { method: 'POST', path: apps.CERTIFICATE_REMOVE, access: 'developer', handler: apps.removeCertificateForm },
    { method: 'GET', path: apps.ANY_APP_PATH, access: 'developer', handler: apps.nothingHere },
    { method: 'POST', path: apps.ANY_APP_PATH, access: 'developer', handler: apps.nothingHere },
  ];
}
