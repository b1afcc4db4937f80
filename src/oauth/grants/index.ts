// The grant registry: one explicit entry per grant module.
import type { Grant } from './grant.ts';
import * as authorizationCode from './authorization-code.ts';
import * as clientCredentials from './client-credentials.ts';
import * as password from './password.ts';
import * as refreshToken from './refresh-token.ts';

const modules: readonly Grant[] = [authorizationCode, clientCredentials, password, refreshToken];

export const grants: ReadonlyMap<string, Grant> = new Map(modules.map((g) => [g.grantType, g]));
