// A policy is a descriptor: its options' schema (part of the config schema, so the file is
// validated with it), an optional check for what a schema cannot say (with the path of each
// problem), and `create`, which runs once at compile time and returns a named step.
import type { Static, TSchema } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { ApiDocument, Operation } from '../openapi/document.ts';
import type { Documents, DocumentValidators } from '../openapi/validators.ts';
import { rateLimitFields, type AnswerHeaders, type RateLimit, type RequestContext, type Step } from '../pipeline/context.ts';
import { StoreUnavailable, type CounterCheck, type CounterResult, type Counters } from '../store/port/index.ts';

/** What a policy is compiled with: where it stands, and the few services policies use. */
export interface PolicyEnv extends PolicySite {
  /** The route's name ('oauth2/token' for the token endpoint): part of the counters' keys, so counts survive a reload. */
  route: string;
  /** Epoch milliseconds. */
  clock: () => number;
  counters: Counters;
  logger: Logger;
  /** The listener's bound on any request body (listen.maxBodySize). */
  maxBodySize: number;
  /** Where quotas and spike arrests report what the RateLimit headers say. */
  rateLimits: RateLimitSite;
}

/** Where a counting policy reports its state after a call, for the RateLimit headers (draft-ietf-httpapi-ratelimit-headers). */
export interface RateLimitSite {
  /** Whether answers here may carry the headers at all (false: the route turned them off); a policy builds nothing to report otherwise. */
  readonly on: boolean;
  /** The policy's name in the headers, unique on its route: `base`, else `base-2`, `base-3`… */
  name(base: string): string;
  /** Adds the policy's state to what the answer carries, unless the token's product turned the headers off. */
  report(ctx: RequestContext, limit: RateLimit): void;
}

/**
 * The RateLimit site of one route (or of the OAuth endpoints): `off` for a route with
 * `rateLimitHeaders: false`; `quietProducts`, the products with it. `setHeaders`: for answers
 * written through setHeader (the OAuth endpoints'), the headers are set as each policy reports.
 */
export function rateLimitSite(options: { off: boolean; quietProducts: ReadonlySet<string>; setHeaders?: boolean }): RateLimitSite {
  const { off, quietProducts, setHeaders = false } = options;
  const taken = new Set<string>();
  return {
    on: !off,
    name(base) {
      let name = base;
      for (let i = 2; taken.has(name); i++) name = `${base}-${i}`;
      taken.add(name);
      return name;
    },
    report: off
      ? () => {}
      : (ctx, limit) => {
          if (ctx.token !== undefined && quietProducts.has(ctx.token.product)) return;
          ctx.rateLimits ??= [];
          const limits = ctx.rateLimits;
          limits.push(limit);
          if (!setHeaders) return;
          const fields = rateLimitFields(limits);
          ctx.res.setHeader('ratelimit-policy', fields.policy);
          ctx.res.setHeader('ratelimit', fields.state);
        },
  };
}

export interface PolicyIssue {
  /** Path below the policy's options. */
  path: (string | number)[];
  message: string;
}

/** A response the gateway holds whole, so that response policies can read and change it. */
export interface HeldResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/**
 * What a response policy does to the answer: `headers` may change the status line's headers (the
 * body can still stream through); `body` needs the whole answer and returns it, changed or not.
 */
export interface ResponseHandler {
  headers?(ctx: RequestContext, response: { status: number; headers: Record<string, string | string[]> }): void;
  body?(ctx: RequestContext, response: HeldResponse): HeldResponse;
}

/** Where a policy is declared, for checks that depend on it. */
export interface PolicySite {
  configDir: string;
  /** On the token endpoint (and the revocation and introspection endpoints) rather than a route: there is no token yet. */
  tokenEndpoint: boolean;
  /** The route's method and path; undefined on the token endpoint. */
  method: string | undefined;
  path: string | undefined;
  /** The OpenAPI operation the route is (under `openapi` in the YAML); undefined for a route written out. */
  operation: OperationSite | undefined;
  /** The documents of this load or compilation of the config, for policies that name one (`openapi: file`). */
  documents: Documents;
  /** What this load compiled of policies' options: `check` compiles, and `create` takes what it compiled. */
  compiled: CompileCache;
}

/** Keeps what is made from a policy's options, so that the load's check and the runtime's create make it once. */
export interface CompileCache {
  /** What `make` made from `options` (the options object of one policy entry) the first time it was asked. */
  once<T>(options: object, make: () => T): T;
}

/** An OpenAPI operation as a route serves it: at `routePath`, which has the document's parameter names. */
export interface OperationSite {
  document: ApiDocument;
  operation: Operation;
  routePath: string;
  validators: DocumentValidators;
}

interface Descriptor<S extends TSchema> {
  schema: S;
  /** Whether these options make sense on the token endpoint, where there is no token yet. */
  tokenEndpoint?(options: Static<S>): boolean;
  check?(options: Static<S>, site: PolicySite): PolicyIssue[];
}

/** Runs before the upstream is called: 'access' policies first (in YAML order), then 'request'. */
export interface RequestPolicy<S extends TSchema> extends Descriptor<S> {
  phase: 'access' | 'request';
  create(options: Static<S>, env: PolicyEnv): Step;
}

/** Runs on the upstream's answer, in YAML order. */
export interface ResponsePolicy<S extends TSchema> extends Descriptor<S> {
  phase: 'response';
  create(options: Static<S>, env: PolicyEnv): ResponseHandler;
}

/**
 * Runs before everything else on its route, authentication included (CORS): it decides what every
 * answer of the route carries, refusals too, and answers the route's preflight itself.
 */
export interface OriginPolicy<S extends TSchema> extends Descriptor<S> {
  phase: 'origin';
  create(options: Static<S>, env: PolicyEnv): OriginHandlers;
}

/** Sets what every answer of the call carries (its CORS headers), before anything else runs. */
export type OriginMark = (ctx: RequestContext) => void;

export interface OriginHandlers {
  mark: OriginMark;
  /** What an answer to `origin` carries when the policy allows it; undefined when it does not. */
  allowed: (origin: string | undefined) => AnswerHeaders | undefined;
  /** The whole of a preflight's route: answers it, or throws the refusal; synchronous, since the OAuth endpoints call it without awaiting. */
  preflight: (ctx: RequestContext) => void;
}

export type Policy<S extends TSchema> = RequestPolicy<S> | ResponsePolicy<S> | OriginPolicy<S>;

/** A counting policy's part of a call's count (quota, spike arrest). */
export interface Count {
  /** The policy's name in the config, for the span of a count that waits on the store's server. */
  policy: 'quota' | 'spikeArrest';
  check(ctx: RequestContext, now: number): CounterCheck;
  /** Takes the check's answer: sets what the response carries (RateLimit-*), throws the refusal. */
  apply(ctx: RequestContext, result: CounterResult, now: number): void;
  /** When the store cannot count: the call goes on, uncounted (true), or the failure is answered 503. */
  failOpen: boolean;
}

/** The step that makes its counts' checks and applies the answers. */
export interface CountStep extends Step {
  readonly counts: readonly Count[];
}

/**
 * The step making `counts` in order, as one: on a store on a server, one round trip. The first
 * refusal stops it, and a check after it counts nothing, as separate steps would. When the store
 * cannot count, the call goes on only if every count fails open, as it would through separate
 * steps (each of which would fail).
 */
export function countStep(counts: readonly Count[], counters: Counters, clock: () => number): CountStep {
  const failed = storeFailure(counts.every((c) => c.failOpen));
  const applyAll = (ctx: RequestContext, results: readonly CounterResult[], now: number): void => {
    for (let i = 0; i < results.length; i++) counts[i]!.apply(ctx, results[i]!, now);
  };
  const count = function count(ctx: RequestContext): void | Promise<void> {
    const now = clock();
    const results = counters.consume(
      counts.map((c) => c.check(ctx, now)),
      now,
    );
    if (results instanceof Promise) return results.then((r) => applyAll(ctx, r, now), failed);
    applyAll(ctx, results, now);
  };
  return Object.assign(count, { counts });
}

/** Joins each run of consecutive count steps into one, which makes their checks in the same order. */
export function joinCounts(steps: readonly Step[], env: Pick<PolicyEnv, 'counters' | 'clock'>): Step[] {
  const out: Step[] = [];
  let run: Count[] = [];
  const flush = () => {
    if (run.length > 0) out.push(countStep(run, env.counters, env.clock));
    run = [];
  };
  for (const step of steps) {
    if ('counts' in step) run.push(...(step as CountStep).counts);
    else {
      flush();
      out.push(step);
    }
  }
  flush();
  return out;
}

/**
 * What a counting policy does when the store cannot count: fail open (the call goes on,
 * uncounted) or closed (the failure is answered 503). Anything else is thrown as it is.
 */
function storeFailure(failOpen: boolean): (err: unknown) => void {
  return (err) => {
    if (failOpen && err instanceof StoreUnavailable) return;
    throw err;
  };
}
