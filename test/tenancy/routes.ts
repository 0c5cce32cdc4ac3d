// Every user and role management route (/users, /roles, /permissions/catalog) as data, so the scoping and isolation
// tests run each rule against each route, and a test can prove that no registered route escaped the table.
import type { ApiClient, ApiResponse } from '../support/client.js';

export interface RouteIds {
  /** A user the route acts on (path id, or body userId for resend-invite). */
  userId: string;
  /** A role the route acts on (path id, or body roleId for invite and assign). */
  roleId: string;
  /** Organisation to name with ?orgId= (query) or orgId (body); omitted = the caller's own scope. */
  orgId?: string;
}

export interface RouteCase {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** As Fastify registers it, without the /api/v1 prefix. */
  url: string;
  /** Whether the route names a user or a role by id (path or body). */
  target: 'none' | 'user' | 'role';
  /** How the organisation is named: query string or body. */
  orgIn: 'query' | 'body';
  /** The request, with a body that would be valid for the ids. */
  call(api: ApiClient, ids: RouteIds): Promise<ApiResponse>;
}

let n = 0;
const fresh = () => `probe-${Date.now().toString(36)}-${++n}@example.test`;
const q = (ids: RouteIds) => ({ query: ids.orgId ? { orgId: ids.orgId } : {} });
const withOrg = <T extends object>(ids: RouteIds, body: T) => (ids.orgId ? { ...body, orgId: ids.orgId } : body);

export const USER_ROUTES: RouteCase[] = [
  { method: 'GET', url: '/users', target: 'none', orgIn: 'query', call: (api, ids) => api.get('/users', q(ids)) },
  {
    method: 'GET',
    url: '/users/roles',
    target: 'none',
    orgIn: 'query',
    call: (api, ids) => api.get('/users/roles', q(ids)),
  },
  {
    method: 'POST',
    url: '/users/invite',
    target: 'role',
    orgIn: 'body',
    call: (api, ids) => api.post('/users/invite', withOrg(ids, { email: fresh(), name: 'Probe', roleId: ids.roleId })),
  },
  {
    method: 'POST',
    url: '/users/resend-invite',
    target: 'user',
    orgIn: 'body',
    call: (api, ids) => api.post('/users/resend-invite', withOrg(ids, { userId: ids.userId })),
  },
  {
    method: 'GET',
    url: '/users/:id',
    target: 'user',
    orgIn: 'query',
    call: (api, ids) => api.get(`/users/${ids.userId}`, q(ids)),
  },
  {
    method: 'PATCH',
    url: '/users/:id',
    target: 'user',
    orgIn: 'query',
    call: (api, ids) => api.patch(`/users/${ids.userId}`, { name: 'Probed' }, q(ids)),
  },
  {
    method: 'DELETE',
    url: '/users/:id',
    target: 'user',
    orgIn: 'query',
    call: (api, ids) => api.delete(`/users/${ids.userId}`, q(ids)),
  },
  {
    method: 'POST',
    url: '/users/:id/role',
    target: 'user',
    orgIn: 'query',
    call: (api, ids) => api.post(`/users/${ids.userId}/role`, { roleId: ids.roleId }, q(ids)),
  },
];

export const ROLE_ROUTES: RouteCase[] = [
  { method: 'GET', url: '/roles', target: 'none', orgIn: 'query', call: (api, ids) => api.get('/roles', q(ids)) },
  {
    method: 'POST',
    url: '/roles',
    target: 'none',
    orgIn: 'body',
    call: (api, ids) => api.post('/roles', withOrg(ids, { name: `Probe ${++n}`, permissions: [] })),
  },
  {
    method: 'GET',
    url: '/roles/permissions/available',
    target: 'none',
    orgIn: 'query',
    call: (api) => api.get('/roles/permissions/available'),
  },
  {
    method: 'GET',
    url: '/roles/:id',
    target: 'role',
    orgIn: 'query',
    call: (api, ids) => api.get(`/roles/${ids.roleId}`, q(ids)),
  },
  {
    method: 'PATCH',
    url: '/roles/:id',
    target: 'role',
    orgIn: 'query',
    call: (api, ids) => api.patch(`/roles/${ids.roleId}`, { description: 'probed' }, q(ids)),
  },
  {
    method: 'DELETE',
    url: '/roles/:id',
    target: 'role',
    orgIn: 'query',
    call: (api, ids) => api.delete(`/roles/${ids.roleId}`, q(ids)),
  },
  {
    method: 'POST',
    url: '/roles/:id/clone',
    target: 'role',
    orgIn: 'body',
    call: (api, ids) => api.post(`/roles/${ids.roleId}/clone`, withOrg(ids, { name: `Clone ${++n}` })),
  },
  {
    method: 'GET',
    url: '/roles/:id/users',
    target: 'role',
    orgIn: 'query',
    call: (api, ids) => api.get(`/roles/${ids.roleId}/users`, q(ids)),
  },
  {
    method: 'GET',
    url: '/roles/:id/effective-permissions',
    target: 'role',
    orgIn: 'query',
    call: (api, ids) => api.get(`/roles/${ids.roleId}/effective-permissions`, q(ids)),
  },
];

/** Routes of this issue outside the administration surface: own profile and the catalogue. */
export const OTHER_ROUTES = ['GET /users/me', 'PATCH /users/me', 'GET /permissions/catalog'];

/** Routes under /users that belong to other issues and have their own tests (admin MFA reset; a member's sessions:
 * test/auth/session-management.test.ts). */
export const FOREIGN_ROUTES = [
  'POST /users/:id/mfa/reset',
  'GET /users/:id/sessions',
  'DELETE /users/:id/sessions/:sid',
];

export const ADMIN_ROUTES = [...USER_ROUTES, ...ROLE_ROUTES];
export const label = (r: RouteCase) => `${r.method} ${r.url}`;
