// The face of the passkeys module: WebAuthn assertions for other sign-in paths (step-up, passwordless). The routes
// are wired in app.ts.
export {
  type AssertionPurpose,
  advanceCounter,
  assertionOptions,
  type VerifiedAssertion,
  verifyAssertion,
} from './assertion.js';
export { passwordlessOptions, passwordlessSignIn } from './passwordless.js';
