// Validation from an OpenAPI document, compiled once per document: the documents of one load, and
// for each its validators, which compile every schema once, whichever route or check asks for it.
// A request's check is request.ts (parameters) and body.ts; an answer's is response.ts; the ajvs
// they compile with, and how they read OpenAPI's schemas, are schemas.ts.
import { compileCheck, type Ajvs, type SchemaCheck } from '../json/schema.ts';
import type { Step } from '../pipeline/context.ts';
import type { AjvKind, Compile } from './checks.ts';
import { loadDocument, type ApiDocument, type Operation } from './document.ts';
import { requestStep } from './request.ts';
import { responseCheck, type Answer, type ResponseFailure } from './response.ts';
import { documentAjvs } from './schemas.ts';

/**
 * The OpenAPI documents of one load or one compilation of a config: a file that policies name is
 * read once, and each document's schemas are compiled once, however many routes use them.
 */
export class Documents {
  readonly #read = new Map<string, ApiDocument>();
  readonly #validators = new Map<ApiDocument, DocumentValidators>();

  /** The document in `file` (an absolute path), read the first time; throws DocumentError. */
  load(file: string): ApiDocument {
    let doc = this.#read.get(file);
    if (doc === undefined) {
      doc = loadDocument(file);
      this.#read.set(file, doc);
    }
    return doc;
  }

  validators(doc: ApiDocument): DocumentValidators {
    let found = this.#validators.get(doc);
    if (found === undefined) {
      found = new DocumentValidators(doc);
      this.#validators.set(doc, found);
    }
    return found;
  }
}

/** What the validators of one document share: its files, compiled into an ajv that coerces (parameters, forms, response headers), one that does not (JSON bodies) and one for JSON answers. */
export class DocumentValidators {
  readonly #doc: ApiDocument;
  /** Parameters, forms and headers: strings read as their schemas' types. */
  readonly #coercing: Ajvs;
  /** JSON request bodies. */
  readonly #strict: Ajvs;
  /** JSON answers, made when a route first asks for response validation. */
  #answers: Ajvs | undefined;
  /** Each schema compiled once, whichever route or check asks for it. */
  readonly #checks = new Map<string, SchemaCheck>();
  /** What the request and response checks compile their schemas with. */
  readonly #compileOnce: Compile = (kind, schema, what) => this.#compile(kind, schema, what);

  constructor(doc: ApiDocument) {
    this.#doc = doc;
    this.#coercing = documentAjvs(doc, true, 'request');
    this.#strict = documentAjvs(doc, false, 'request');
  }

  /**
   * The step validating requests of `op`, served at `routePath` (the document's path after the
   * base path); `maxBodySize` bounds a body it reads. Throws a TypeError naming what the document
   * gets wrong (a style its parameter cannot have, a schema ajv cannot compile).
   */
  request(op: Operation, routePath: string, maxBodySize: number): Step {
    return requestStep(op, routePath, maxBodySize, this.#compileOnce);
  }

  /**
   * What checks the upstream's answers to `op`: its status must be one the operation declares (or
   * `default`), a body of a declared media type that its schema accepts, and every required
   * header present and as its schema says. Throws a TypeError naming a schema ajv cannot compile.
   */
  response(op: Operation): (method: string, answer: Answer) => ResponseFailure[] {
    return responseCheck(op, this.#compileOnce);
  }

  #compile(kind: AjvKind, schema: object, what: string): SchemaCheck {
    let ajv: Ajvs;
    if (kind === 'coercing') ajv = this.#coercing;
    else if (kind === 'strict') ajv = this.#strict;
    else {
      this.#answers ??= documentAjvs(this.#doc, false, 'response');
      ajv = this.#answers;
    }
    const key = `${kind} ${JSON.stringify(schema)}`;
    let check = this.#checks.get(key);
    if (check !== undefined) return check;
    try {
      check = compileCheck(ajv, schema);
    } catch (err) {
      throw new TypeError(`${what}: ${(err as Error).message}`);
    }
    this.#checks.set(key, check);
    return check;
  }
}
