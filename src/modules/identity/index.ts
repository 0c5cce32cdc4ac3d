// The identity core's public face: the sign-in flow that auth, mfa, passkeys and sso share (stored flows, sessions,
// the token response, passwords, memberships, the account mails, the signed-in user's profile). It imports none of
// those modules; the only file other modules may import.
export {
  CSRF_COOKIE,
  CSRF_HEADER,
  REFRESH_COOKIE,
  assertCsrf,
  clearSessionCookies,
  setSessionCookies,
} from './cookies.js';
export { DEVICE_COOKIE, recognizeDevice } from './devices.js';
export { mails } from './mail-templates.js';
export { type Membership, pickDefault } from './memberships.js';
export {
  assertStrongPassword,
  hashPassword,
  newPasswordField,
  presentedPasswordField,
  setPassword,
  verifyPassword,
} from './passwords.js';
export { currentProfile, loadProfile, toProfile } from './profile.js';
export {
  consumeFlow,
  countFlowAttempt,
  createFlow,
  type Flow,
  type FlowKind,
  findSession,
  findUser,
  findUserByEmail,
  listMemberships,
  lockUser,
  markMembershipUsed,
  peekFlow,
  type SessionFilter,
  type SessionRow,
  ssoEnforcedFor,
  type UserRow,
  voidFlows,
} from './repo.js';
export { type UserProfile, userProfile } from './schemas.js';
export { type SessionJson, sessionJson, toSessionJson } from './session-json.js';
export {
  ABSOLUTE_SESSION_MS,
  createSession,
  type NewSession,
  newSessionTerms,
  revokeUserSessions,
  rotateCallerSession,
  type SessionContext,
  signSessionToken,
} from './sessions.js';
export { RESET_TTL_MS, resetUrl, startSession } from './sign-in.js';
export { type IssuedSession, respondWithTokens, type TokenResponse, tokenResponse } from './token-response.js';
