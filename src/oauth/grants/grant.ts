import type { KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { GrantTypeName } from '../../config/schema.ts';
import type { ProductSettings } from '../../config/load.ts';
import type { Client, Confirmation, Store } from '../../store/port/index.ts';
import type { AccessTokenSigning, TokenResponseBody } from '../tokens.ts';
import type { TraceSpan } from '../../pipeline/trace.ts';

/** What a grant handler gets once the client is authenticated and the grant and scope are allowed. */
export interface GrantRequest {
  req: IncomingMessage;
  form: ReadonlyMap<string, string>;
  client: Client;
  product: ProductSettings;
  /** The scope asked for, already checked against the product; undefined when not asked. */
  scope: readonly string[] | undefined;
  now: number;
  /** The key (DPoP) the client proved it holds: the tokens are bound to it. */
  cnf: Confirmation | undefined;
  /** The call's span, when traces are on: the authorization server's call gets one under it. */
  span: TraceSpan | undefined;
}

/** The services grants use. */
export interface GrantEnv {
  store: Store;
  /** Key of the keyed hash of app secrets (and of usernames the password grant counts). */
  secretKey: KeyObject;
  /** The authorization servers the password grant asks, by name (src/authserver/client.ts). */
  authServers: ReadonlyMap<string, { verify(username: string, password: string, span?: TraceSpan): Promise<string> }>;
  /** What signs the access tokens of products with accessTokenFormat: jwt. */
  signing: AccessTokenSigning;
}

/** Every grant module exports these three, and src/oauth/grants/index.ts registers them. */
export interface Grant {
  grantType: GrantTypeName;
  /** Parameters the grant reads besides grant_type, scope and client authentication. */
  parameters: ReadonlySet<string>;
  handle(request: GrantRequest, env: GrantEnv): Promise<TokenResponseBody>;
}
