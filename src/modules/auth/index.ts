// The auth module's public face: the only file other modules may import (the app mounts the routes itself). The
// sign-in flow it shares with mfa, passkeys and sso (sessions, stored flows, the token response) is in identity.
export { type ChangeRequester, requestEmailChange } from './email-proof.js';
export { createInviteToken, inviteUrl } from './invites.js';
export { proveAccount } from './proof.js';
export { countRegistrationAttempt, registerPartner } from './registration-service.js';
export { opaqueToken, registerPartnerBody } from './schemas.js';
export { endMemberSession, listMemberSessions, sessionJson } from './session-list.js';
