// YAML file → environment substituted → validated against the schema → the schema's defaults
// filled into a new copy → checked across sections → a new, frozen `Config`. Every problem names
// the YAML path and line. The parts: yaml.ts, messages.ts (the schema's errors in words),
// defaults.ts, sections.ts, routes.ts and openapi.ts; what the load compiled stays with the
// config for the runtime (compiled.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { policySchema } from '../policies/index.ts';
import { identityProviderSettings } from './authorization.ts';
import { createCompiled, keepCompiled } from './compiled.ts';
import { defaulted as d, withDefaults } from './defaults.ts';
import { ConfigError, inLineOrder, readFailure, type ConfigIssue, type Segments } from './errors.ts';
import { schemaIssues } from './messages.ts';
import { signingSettings } from './signing.ts';
import { routeSections, tokenPolicies } from './routes.ts';
import { configSchema, type ConfigFile } from './schema.ts';
import { authServerSettings, createSite, keyOverlapMs, listenSettings, mailSettings, managementSettings, plainSections, portalSettings, storeSettings, upstreamSettings } from './sections.ts';
import type { Config } from './types.ts';
import { configValidator } from './validator.ts';
import { formatPath, readYaml } from './yaml.ts';

export { ConfigError, type ConfigIssue } from './errors.ts';
export { durationMs } from './sections.ts';
export type {
  AuthorizationSettings,
  AuthServerSettings,
  Config,
  IdentityProviderSettings,
  MailSettings,
  ManagementSettings,
  PortalSettings,
  ProductSettings,
  RouteSettings,
  UpstreamSettings,
} from './types.ts';
export { formatPath } from './yaml.ts';

export interface LoadOptions {
  env?: Readonly<Record<string, string | undefined>>;
}

export function loadConfigFile(file: string, options: LoadOptions = {}): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [{ path: '', message: `cannot read ${file}: ${readFailure(err)}`, line: undefined }]);
  }
  return parseConfig(text, file, options);
}

export function parseConfig(text: string, file: string, options: LoadOptions = {}): Config {
  const source = readYaml(text, file, options.env ?? process.env);
  const validate = configValidator();
  if (!validate(source.plain)) throw new ConfigError(file, inLineOrder(schemaIssues(validate.errors ?? [], source.lineAt)));
  const issues: ConfigIssue[] = [];
  const report = (segments: Segments, message: string) => issues.push({ path: formatPath(segments), message, line: source.lineAt(segments) });
  const config = build(source.plain, file, report);
  // A document's policies are checked for each of its operations: a problem in them is said once.
  if (issues.length > 0) throw new ConfigError(file, inLineOrder(issues));
  return deepFreeze(config);
}

function build(raw: ConfigFile, file: string, report: (segments: Segments, message: string) => void): Config {
  const c = withDefaults(configSchema, raw, new Set([policySchema]));
  const dir = path.dirname(path.resolve(file));
  const site = createSite(dir, report);
  const compiled = createCompiled();
  const oauth = d(c.oauth);
  const authServers = authServerSettings(c.authServers, site);
  const upstreams = upstreamSettings(c.upstreams, site);
  const identityProviders = identityProviderSettings(c, site);
  const { routes, openapi, products } = routeSections(c, site, new Set(upstreams.keys()), { authServers, identityProviders }, compiled);
  const config: Config = {
    file: path.resolve(file),
    listen: listenSettings(c, site),
    ...plainSections(c, site),
    store: storeSettings(c.store ?? {}, raw.store ?? {}, site),
    oauth: {
      realm: d(oauth.realm),
      policies: tokenPolicies(c, dir, compiled, report),
      issuer: oauth.issuer,
      introspectionClients: oauth.introspection?.clients ?? [],
      signing: signingSettings(c, site, { products, routes }),
      dpop: { maxAgeMs: site.duration(d(oauth.dpop).maxAge, ['oauth', 'dpop', 'maxAge']), nonce: d(d(oauth.dpop).nonce) },
    },
    portal: portalSettings(c, site),
    management: managementSettings(c, site),
    keyOverlapMs: keyOverlapMs(c, site),
    mail: mailSettings(c.mail, dir),
    authServers,
    identityProviders,
    upstreams,
    routes,
    openapi,
    products,
  };
  return keepCompiled(config, compiled);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (value instanceof Map) for (const v of value.values()) deepFreeze(v);
    else if (value instanceof Set) return value;
    else for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
