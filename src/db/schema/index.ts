export * from './enums.js';
export * from './tenants.js';
export * from './identity.js';
export * from './flows.js';
export * from './sso.js';
export * from './onboarding.js';
export * from './platform.js';
export * from './service-accounts.js';
