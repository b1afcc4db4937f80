// What the operations of src/admin run with, who runs them, and how the audit lines name them.
import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { PortalSettings, ProductSettings } from '../config/load.ts';
import type { SigningSettings } from '../config/types.ts';
import type { App, Developer, Store } from '../store/port/index.ts';
import type { AppRef, DeveloperActor, DeveloperRef, OperatorActor, VisitorActor } from './audit.ts';
import type { Passwords } from './passwords.ts';

/** What the operations use: a few services, the config's products, and its portal settings (limits, sign-up) and key overlap. */
export interface AdminDeps {
  store: Store;
  /** Key of the keyed hash of app secrets. */
  secretKey: KeyObject;
  /** Epoch milliseconds. */
  clock: () => number;
  logger: Logger;
  passwords: Passwords;
  products: ReadonlyMap<string, ProductSettings>;
  portal: PortalSettings | undefined;
  /** How long a rotated key keeps working (the config's keyOverlapMs). */
  keyOverlapMs: number;
}

/** The portal's operations: the config has a portal section. */
export interface PortalDeps extends AdminDeps {
  portal: PortalSettings;
}

/**
 * The operator's operations (`gateway admin`, the management API) run with who runs them, for
 * their audit lines. The portal has no operator, so it cannot call the operations only operators may.
 */
export interface OperatorDeps extends AdminDeps {
  operator: OperatorActor;
  developer?: undefined;
  /** The config's oauth.signing, for the signing key operations (`gateway admin keys`). */
  signing?: SigningSettings;
}

/** A portal developer, acting on their own apps and keys: the same operations as an operator's, with an owner check. */
export interface DeveloperDeps extends PortalDeps {
  developer: Developer;
}

/** Who acts on apps and keys: an operator on any, a developer on their own. */
export type CallerDeps = OperatorDeps | DeveloperDeps;

export const isDeveloper = (deps: CallerDeps): deps is DeveloperDeps => deps.developer !== undefined;

/** The portal's deps for one developer's request. */
export const actingAs = (deps: PortalDeps, developer: Developer): DeveloperDeps => ({ ...deps, developer });

export const asOperator = (deps: OperatorDeps): OperatorActor => deps.operator;
export const asDeveloper = (dev: Developer): DeveloperActor => ({ kind: 'developer', id: dev.id, email: dev.email });
export const asCaller = (deps: CallerDeps) => (isDeveloper(deps) ? asDeveloper(deps.developer) : asOperator(deps));
export const asVisitor = (clientIp: string): VisitorActor => ({ kind: 'visitor', ip: clientIp });
export const developerRef = (dev: Developer): DeveloperRef => ({ id: dev.id, email: dev.email });
/** The audit fields of a line about an app: its developer and the app. */
export const ofApp = (app: App): { developer: DeveloperRef; app: AppRef } => ({
  developer: { id: app.developerId, email: app.developerEmail },
  app: { id: app.id, name: app.name, product: app.product, type: app.type },
});
