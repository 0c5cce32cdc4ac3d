// The tenants module's public face: the only file other modules may import (the app mounts routes.ts itself).
export { accessibleOrg, assertFullPartnerAccess } from './access.js';
export { groupRestriction, scopeOf, siteRestriction } from '../../access/scope.js';
export {
  BY_ID_ROUTES,
  byIdQuery,
  CONFIG_ITEM,
  CONTACT,
  covers,
  CUSTOM_FIELD,
  DEVICE,
  DEVICE_GROUP,
  DOMAIN,
  ENROLLMENT_KEY,
  findInScope,
  installByIdScope,
  ORGANIZATION,
  SCIM_TOKEN,
  SCRIPT,
  SERVICE_ACCOUNT,
  SITE,
  SSO_PROVIDER,
  WEBHOOK,
  type ByIdResource,
  type RecordOwner,
} from './by-id.js';
export { idParam } from './schemas.js';
export { auditTenant, mayAccessOrg, partnerOrgIds, resolveTarget, type TargetScope } from './scope.js';
export {
  breakGlassUserOf,
  effectiveSecurity,
  ipAllowlistOf,
  JIT_APPROVAL,
  jitApprovalOf,
  jitMaxMinutesOf,
  MSP_ACCESS,
  mspAccessOf,
  standingAccessLapseDaysOf,
} from '../../access/settings.js';
export { checkSiteOfOrg, findGroup, findSite } from './sites-service.js';
