// The tenants module's public face: the only file other modules may import (the app mounts routes.ts itself).
export { accessibleOrg, assertFullPartnerAccess } from './access.js';
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
export { auditTenant, partnerOrgIds, resolveTarget } from './target.js';
export { checkSiteOfOrg, findGroup, findSite } from './sites-service.js';
