// A management API client for tests: fetch, with every answer checked against the API's own
// OpenAPI document by the gateway's response validation, and a gateway with a management listener.
import assert from 'node:assert/strict';
import { createManagementClient, MANAGEMENT_SCOPES } from '../../src/admin/management-clients.ts';
import { managementDocument } from '../../src/management/document.ts';
import { builtInDocument, findOperation } from '../../src/openapi/document.ts';
import { Documents } from '../../src/openapi/validators.ts';
import { basic, call, startTestGateway, type Answer, type ConfigParts, type TestGateway } from '../helpers.ts';

const document = builtInDocument('management-api.json', managementDocument);
const validators = new Documents().validators(document);

export const ALL_SCOPES = Object.keys(MANAGEMENT_SCOPES);

/** Fails unless the answer is one the document describes for the operation at `template` (the path as the document writes it, /v1 included). */
export function checkAnswer(method: string, template: string, answer: Answer): void {
  const found = findOperation(document, method, template);
  assert.ok(found, `the document has no operation ${method} ${template}`);
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const failures = validators.response(found.operation)(method, { status: answer.status, headers, body: Buffer.from(answer.text) });
  assert.deepEqual(failures, [], `${method} ${template} answered ${answer.status} ${answer.text}`);
}

export interface ManagedGateway extends TestGateway {
  managementUrl: string;
  /** A new management client with these scopes, and an access token of it. */
  managementToken(scopes?: readonly string[], name?: string): Promise<{ key: string; secret: string; token: string }>;
}

let clients = 0;

export async function startManagedGateway(parts: ConfigParts = {}): Promise<ManagedGateway> {
  const gw = await startTestGateway({ ...parts, extra: `${parts.extra ?? ''}\nmanagement:\n  port: 0\n` });
  const managementUrl = gw.gateway.managementUrl!;
  return Object.assign(gw, {
    managementUrl,
    async managementToken(scopes: readonly string[] = ALL_SCOPES, name = `automation-${++clients}`) {
      const made = await createManagementClient(gw.admin, { name, scopes });
      const answer = await call(`${managementUrl}/oauth2/token`, {
        method: 'POST',
        headers: { authorization: basic(made.key, made.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      assert.equal(answer.status, 200, answer.text);
      return { key: made.key, secret: made.secret, token: answer.body.access_token as string };
    },
  });
}

/** Calls the API at `base` with `token`, checking the answer against the document. */
export function api(base: string, token: string) {
  return async function request(method: string, template: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
    const answer = await call(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    checkAnswer(method, template, answer);
    return answer;
  };
}
