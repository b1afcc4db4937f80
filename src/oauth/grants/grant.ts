import type { IncomingMessage } from 'node:http';
import type { GrantTypeName } from '../../config/schema.ts';
import type { ProductSettings } from '../../config/load.ts';
import type { Deps } from '../../deps.ts';
import type { Client } from '../../store/port/index.ts';
import type { TokenResponseBody } from '../tokens.ts';

/** What a grant handler gets once the client is authenticated and the grant and scope are allowed. */
export interface GrantRequest {
  req: IncomingMessage;
  form: ReadonlyMap<string, string>;
  client: Client;
  product: ProductSettings;
  /** The scope asked for, already checked against the product; undefined when not asked. */
  scope: readonly string[] | undefined;
  now: number;
}

/** Every grant module exports these three, and src/oauth/grants/index.ts registers them. */
export interface Grant {
  grantType: GrantTypeName;
  /** Parameters the grant reads besides grant_type, scope and client authentication. */
  parameters: ReadonlySet<string>;
  handle(request: GrantRequest, deps: Deps): Promise<TokenResponseBody>;
}
