// The roles module's public face: the only file other modules may import (the app mounts routes.ts itself).
export { hasPermission, loadRoleChain, RoleCache, type ResolvedRole } from '../../access/resolver.js';
export { bumpAuthzEpoch } from './repo.js';
export { orgQuery, roleJson, roleListQuery } from './schemas.js';
export { findRole, listRoles } from './service.js';
