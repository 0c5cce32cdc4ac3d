// The face of the passkeys module: WebAuthn assertions for other sign-in paths (step-up, passwordless) and the
// passkey operations the MFA routes serve.
export {
  type AssertionPurpose,
  advanceCounter,
  assertionOptions,
  type VerifiedAssertion,
  verifyAssertion,
} from './assertion.js';
export { passwordlessOptions, passwordlessSignIn } from './passwordless.js';
export {
  deletePasskey,
  listPasskeys,
  loginOptions,
  registrationOptions,
  renamePasskey,
  verifyLoginPasskey,
  verifyRegistration,
} from './service.js';
