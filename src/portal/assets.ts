// The portal's only assets, served by the portal itself: nothing is fetched from elsewhere, and the
// single executable carries them. Their sources are src/portal/browser/portal.ts and portal.css;
// scripts/portal-assets.ts turns them into the strings served here.
import { PORTAL_CSS, PORTAL_JS } from './browser/generated.ts';
import type { PortalRoute } from './context.ts';

export function assetRoutes(): PortalRoute[] {
  return [
    { method: 'GET', path: '/assets/portal.css', access: 'static', asset: { type: 'text/css; charset=utf-8', body: Buffer.from(PORTAL_CSS) } },
    { method: 'GET', path: '/assets/portal.js', access: 'static', asset: { type: 'text/javascript; charset=utf-8', body: Buffer.from(PORTAL_JS) } },
  ];
}
