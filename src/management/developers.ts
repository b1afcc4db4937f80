// The management API's operations on developers: each a thin call of src/admin, as `gateway admin developers` is.
import { invitationLink, inviteDeveloper } from '../admin/accounts.ts';
import { createDeveloper, deleteDeveloper, listDevelopers, requireDeveloper, setDeveloperStatus } from '../admin/developers.ts';
import { AdminError } from '../admin/errors.ts';
import { isReserved } from '../admin/management-clients.ts';
import type { Developer } from '../store/port/index.ts';
import { page, requireMatch, type Call, type ManagementOperation } from './call.ts';

/** The developer a path names, by id or email; the management clients' reserved one is as unknown as one that does not exist. */
export async function developerOf(call: Call, ref: string): Promise<Developer> {
  const { deps } = call;
  if (ref.includes('@')) return requireDeveloper(deps, ref);
  const dev = await deps.store.accounts.findDeveloperById(ref);
  if (dev === undefined || isReserved(dev)) throw new AdminError('unknown_developer', `no developer ${ref}`);
  return dev;
}

const DAY_MS = 86_400_000;

export const developerOperations: Record<string, ManagementOperation> = {
  async listDevelopers(call) {
    return { status: 200, body: page(await listDevelopers(call.deps), (d) => d.email, call.query) };
  },
  async createDeveloper(call) {
    const dev = await createDeveloper(call.deps, call.body as { email: string; name: string });
    return { status: 201, body: dev, etag: true, headers: { location: `/v1/developers/${dev.id}` } };
  },
  async getDeveloper(call) {
    return { status: 200, body: await developerOf(call, call.params.developer!), etag: true };
  },
  async updateDeveloper(call) {
    const dev = await developerOf(call, call.params.developer!);
    requireMatch(call, dev);
    const { status } = call.body as { status?: Developer['status'] };
    return { status: 200, body: status === undefined ? dev : await setDeveloperStatus(call.deps, dev.email, status), etag: true };
  },
  async deleteDeveloper(call) {
    const dev = await developerOf(call, call.params.developer!);
    requireMatch(call, dev);
    await deleteDeveloper(call.deps, dev.email);
    return { status: 204 };
  },
  async inviteDeveloper(call) {
    const dev = await developerOf(call, call.params.developer!);
    const { validDays = 7 } = (call.body ?? {}) as { validDays?: number };
    const invite = await inviteDeveloper(call.deps, dev.email, validDays * DAY_MS);
    const link = invitationLink(call.deps.portal, invite.developer.email, invite.code);
    return { status: 201, body: { email: invite.developer.email, code: invite.code, expiresAt: invite.expiresAt, ...(link === undefined ? {} : { link }) } };
  },
};
