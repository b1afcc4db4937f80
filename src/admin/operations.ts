// Operations on developers, apps and keys, shared by `gateway admin` and the developer portal, by part:
// apps and keys (./apps.ts), developers (./developers.ts), portal accounts (./accounts.ts), and the
// rules for what people type (./inputs.ts). One import for the callers that use several.
export {
  acceptInvitation,
  changePassword,
  CONFIRM_LINK_VALID_MS,
  confirmEmail,
  INVITATION_VALID_MS,
  inviteDeveloper,
  logIn,
  openSignUp,
  requestConfirmationLink,
  requestPasswordReset,
  RESET_LINK_VALID_MS,
  resetPassword,
} from './accounts.ts';
export type { ConfirmationRequest, Login, SignUpResult } from './accounts.ts';
export { approveApp, createApp, deleteApp, findApp, listApps, revokeKey, rotateKey, setAppStatus, setRedirectUris } from './apps.ts';
export type { AppDetails, AppRef, CreatedApp, RotatedKey } from './apps.ts';
export { actingAs } from './deps.ts';
export type { AdminDeps, CallerDeps, DeveloperDeps, OperatorDeps, PortalDeps } from './deps.ts';
export { createDeveloper, listDevelopers, setDeveloperStatus } from './developers.ts';
export { AdminError } from './errors.ts';
export { normaliseEmail } from './inputs.ts';
