// The identity core's public face: the sign-in flow that auth, mfa, passkeys and sso share (stored flows, sessions,
// the token response, passwords, memberships, the account mails, the signed-in user's profile). It imports none of
// those modules; the only file other modules may import.
export { assertCsrf, CSRF_COOKIE, clearSessionCookies, REFRESH_COOKIE } from './cookies.js';
export { mails } from './mail-templates.js';
export { type Membership, pickDefault, pickPasswordDefault } from './memberships.js';
export {
  assertStrongPassword,
  hashPassword,
  newPasswordField,
  presentedPasswordField,
  setPassword,
  verifyPassword,
} from './passwords.js';
export { currentProfile, toProfile } from './profile.js';
export {
  addressTakenByOther,
  consumeFlow,
  countFlowAttempt,
  createFlow,
  type Flow,
  findSession,
  findUser,
  findUserByEmail,
  listMemberships,
  liveFlowOf,
  lockAddress,
  lockUser,
  markAddressProven,
  markMembershipUsed,
  noteFlowOutcome,
  peekFlow,
  type SessionRow,
  ssoEnforcedFor,
  ssoOnlyEverywhere,
  ORG_SSO_ONLY,
  PARTNER_SSO_ONLY,
  type UserRow,
  voidFlows,
  liveFlowFor,
  voidFlowsFor,
} from './repo.js';
export { type UserProfile, userProfile } from './schemas.js';
export { sessionJson, toSessionJson } from './session-json.js';
export { createSession, revokeUserSessions, rotateCallerSession, type SessionContext } from './sessions.js';
export { RESET_TTL_MS, resetUrl, startSession } from './sign-in.js';
export { type IssuedSession, respondWithTokens, tokenResponse } from './token-response.js';
export { finishUnanswered } from './unanswered.js';
