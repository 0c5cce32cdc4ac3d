// The face of the MFA module: what other modules use of the second factors. The routes are wired in app.ts.
export { looksLikeRecoveryCode } from './codes.js';
export { twoFactorOn } from './enabled.js';
export { acceptTotp, clearAllFactors, consumeRecoveryCode, recomputeFactors } from './factors.js';
export { type PendingLogin, pendingLogin, recordSecondFactorFailure, takePendingLogin } from './login-flow.js';
export { authenticationCredential, registrationCredential, sixDigits, tempTokenField } from './schemas.js';
export { assertMethodAllowed } from './setup-service.js';
export { acceptStepUpSms, sendStepUpSms } from './sms-service.js';
