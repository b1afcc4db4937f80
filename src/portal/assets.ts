// The portal's only assets, served by the portal itself: nothing is fetched from elsewhere, and the
// single executable carries them. Their sources are src/portal/browser/portal.ts and portal.css;
// scripts/portal-assets.ts turns them into the strings served here. The icon is small enough to
// be written here as it is.
import { PORTAL_CSS, PORTAL_JS } from './browser/generated.ts';
import type { PortalRoute } from './context.ts';

/** Where every page's <link rel="icon"> points. */
export const FAVICON_PATH = '/assets/favicon.svg';

/** A key on the accent colour of the stylesheet: shapes only, so that it looks the same whatever fonts the browser has. */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2457c5"/><circle cx="11" cy="16" r="5.5" fill="none" stroke="#fff" stroke-width="3"/><path d="M16.5 16H27M23 16v5M27 16v4" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>
`;

export function assetRoutes(): PortalRoute[] {
  const icon = { type: 'image/svg+xml', body: Buffer.from(FAVICON) };
  return [
    { method: 'GET', path: '/assets/portal.css', access: 'static', asset: { type: 'text/css; charset=utf-8', body: Buffer.from(PORTAL_CSS) } },
    { method: 'GET', path: '/assets/portal.js', access: 'static', asset: { type: 'text/javascript; charset=utf-8', body: Buffer.from(PORTAL_JS) } },
    { method: 'GET', path: FAVICON_PATH, access: 'static', asset: icon },
    // Browsers ask for /favicon.ico where a page names no icon (the portal's own error pages name one; a
    // bookmark or a feed reader may not): the same icon, rather than a 404 in every log.
    { method: 'GET', path: '/favicon.ico', access: 'static', asset: icon },
  ];
}
