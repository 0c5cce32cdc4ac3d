// RBAC as typed data: the catalogue, the route-check constants, the seeded system roles and the aliases
// all come from here (the seed migration is generated from this file by scripts/gen-seed-sql.ts).

export const RESOURCES = [
  'devices',
  'scripts',
  'alerts',
  'automations',
  'reports',
  'backup',
  'billing',
  'users',
  'settings',
  'organizations',
  'sites',
  'remote',
  'ai_agents',
  'topology',
  'vulnerabilities',
  'audit',
  'api_keys',
  'authz',
] as const;
export type Resource = (typeof RESOURCES)[number];

export const ACTIONS = [
  'read',
  'write',
  'delete',
  'execute',
  'invite',
  'acknowledge',
  'access',
  'accept_risk',
  'export',
  'manage',
  'evaluate',
] as const;
export type Action = (typeof ACTIONS)[number];

/** Catalogue verbs accepted on the wire and stored canonical. */
export const ACTION_ALIASES = { view: 'read', create: 'write', update: 'write' } as const satisfies Record<
  string,
  Action
>;

export const CATALOG: Record<Resource, Partial<Record<Action, string>>> = {
  devices: {
    read: 'View devices and their inventory',
    write: 'Change devices and device groups',
    delete: 'Remove devices',
    execute: 'Run actions on devices',
  },
  scripts: {
    read: 'View scripts',
    write: 'Create and edit scripts',
    delete: 'Delete scripts',
    execute: 'Run scripts on devices',
  },
  alerts: { read: 'View alerts', write: 'Configure alert templates', acknowledge: 'Acknowledge alerts' },
  automations: {
    read: 'View automations and policies',
    write: 'Create and edit automations',
    delete: 'Delete automations',
  },
  reports: { read: 'View reports', write: 'Create and edit reports', delete: 'Delete reports' },
  backup: { read: 'View backup status', write: 'Configure backups', delete: 'Delete backup configuration' },
  billing: { read: 'View billing', write: 'Change billing details' },
  users: {
    read: 'View users and roles',
    write: 'Change users and roles',
    delete: 'Remove users and delete roles',
    invite: 'Invite users',
  },
  settings: { read: 'View settings, SSO and custom fields', write: 'Change settings, SSO and custom fields' },
  organizations: {
    read: 'View organisations and contacts',
    write: 'Create and change organisations and contacts',
    delete: 'Delete organisations',
  },
  sites: {
    read: 'View sites and device groups',
    write: 'Create and change sites and device groups',
    delete: 'Delete sites and device groups',
  },
  remote: { access: 'Open remote sessions' },
  ai_agents: { read: 'View AI agents', write: 'Configure AI agents', execute: 'Run AI agents' },
  topology: { read: 'View network topology', write: 'Change network topology' },
  vulnerabilities: { read: 'View vulnerabilities', accept_risk: 'Accept the risk of a vulnerability' },
  audit: { read: 'View the audit trail', export: 'Export the audit trail', manage: 'Manage audit retention' },
  api_keys: {
    read: 'View service accounts and their API keys (never a secret)',
    write: 'Create, change and delete service accounts; issue and revoke their API keys',
  },
  authz: {
    evaluate:
      "Ask the authorization API (/access/v1) whether the partner's users and service accounts may act on its records",
  },
};

export type PermissionKey = `${Resource}:${Action}` | '*:*';

/**
 * Destructive permissions: those whose mass use across customers is the damage an attacker holding one principal does
 * (run code on devices, control them remotely, remove devices, sites or organisations, change people and their roles,
 * delete backups, run AI agents). A freeze refuses them; the governor's budgets count their uses. Reading, and
 * configuration that destroys nothing on a device (alerts, reports, automations), are not.
 */
export const DESTRUCTIVE_PERMISSIONS = [
  'devices:delete',
  'devices:execute',
  'scripts:execute',
  'remote:access',
  'users:write',
  'users:delete',
  'organizations:delete',
  'sites:delete',
  'backup:delete',
  'ai_agents:execute',
] as const satisfies readonly PermissionKey[];

const DESTRUCTIVE = new Set<string>(DESTRUCTIVE_PERMISSIONS);
/** Whether a permission key (`resource:action`) is destructive. */
export const isDestructive = (permission: string): boolean => DESTRUCTIVE.has(permission);

export const CATALOG_ENTRIES: { resource: Resource; action: Action; description: string; destructive: boolean }[] =
  RESOURCES.flatMap((resource) =>
    Object.entries(CATALOG[resource]).map(([action, description]) => ({
      resource,
      action: action as Action,
      description: description!,
      destructive: DESTRUCTIVE.has(`${resource}:${action}`),
    })),
  );

const p = <R extends Resource>(resource: R, ...actions: Action[]) =>
  actions.map((a) => `${resource}:${a}` as PermissionKey);

/** The permission keys route guards check. */
export const PERMISSIONS = {
  DEVICES_READ: 'devices:read',
  DEVICES_WRITE: 'devices:write',
  DEVICES_DELETE: 'devices:delete',
  DEVICES_EXECUTE: 'devices:execute',
  SCRIPTS_READ: 'scripts:read',
  SCRIPTS_WRITE: 'scripts:write',
  SCRIPTS_DELETE: 'scripts:delete',
  SCRIPTS_EXECUTE: 'scripts:execute',
  ALERTS_READ: 'alerts:read',
  ALERTS_WRITE: 'alerts:write',
  ALERTS_ACKNOWLEDGE: 'alerts:acknowledge',
  USERS_READ: 'users:read',
  USERS_WRITE: 'users:write',
  USERS_DELETE: 'users:delete',
  USERS_INVITE: 'users:invite',
  ORGS_READ: 'organizations:read',
  ORGS_WRITE: 'organizations:write',
  ORGS_DELETE: 'organizations:delete',
  SITES_READ: 'sites:read',
  SITES_WRITE: 'sites:write',
  SITES_DELETE: 'sites:delete',
  AUTOMATIONS_READ: 'automations:read',
  AUTOMATIONS_WRITE: 'automations:write',
  AUTOMATIONS_DELETE: 'automations:delete',
  TOPOLOGY_READ: 'topology:read',
  TOPOLOGY_WRITE: 'topology:write',
  VULN_RISK_ACCEPT: 'vulnerabilities:accept_risk',
  REMOTE_ACCESS: 'remote:access',
  AUDIT_READ: 'audit:read',
  AUDIT_EXPORT: 'audit:export',
  AUDIT_MANAGE: 'audit:manage',
  SETTINGS_READ: 'settings:read',
  SETTINGS_WRITE: 'settings:write',
  API_KEYS_READ: 'api_keys:read',
  API_KEYS_WRITE: 'api_keys:write',
  AUTHZ_EVALUATE: 'authz:evaluate',
  ADMIN_ALL: '*:*',
} as const satisfies Record<string, PermissionKey>;

const technician = [
  ...p('organizations', 'read'),
  ...p('sites', 'read'),
  ...p('devices', 'read', 'write', 'execute'),
  ...p('scripts', 'read', 'execute'),
  ...p('alerts', 'read', 'acknowledge'),
  ...p('automations', 'read'),
  ...p('reports', 'read'),
  ...p('remote', 'access'),
  ...p('topology', 'read'),
];
const viewer = [
  ...p('organizations', 'read'),
  ...p('sites', 'read'),
  ...p('devices', 'read'),
  ...p('scripts', 'read'),
  ...p('alerts', 'read'),
  ...p('reports', 'read'),
  ...p('topology', 'read'),
];

export const SYSTEM_ROLES = [
  {
    id: '00000000-0000-4000-8000-000000000001',
    name: 'Partner Admin',
    appliesTo: 'partner',
    forceMfa: true,
    description: 'Full administrative access to the partner and every organisation',
    permissions: ['*:*'],
  },
  {
    id: '00000000-0000-4000-8000-000000000002',
    name: 'Partner Technician',
    appliesTo: 'partner',
    forceMfa: false,
    description: 'Day-to-day device work across organisations',
    permissions: technician,
  },
  {
    id: '00000000-0000-4000-8000-000000000003',
    name: 'Partner Viewer',
    appliesTo: 'partner',
    forceMfa: false,
    description: 'Read-only access',
    permissions: viewer,
  },
  {
    id: '00000000-0000-4000-8000-000000000004',
    name: 'Organization Admin',
    appliesTo: 'organization',
    forceMfa: false,
    description: 'Administers one organisation',
    permissions: [
      ...p('organizations', 'read', 'write'),
      ...p('sites', 'read', 'write', 'delete'),
      ...p('devices', 'read', 'write', 'delete', 'execute'),
      ...p('scripts', 'read', 'write', 'delete', 'execute'),
      ...p('alerts', 'read', 'write', 'acknowledge'),
      ...p('automations', 'read', 'write', 'delete'),
      ...p('reports', 'read', 'write', 'delete'),
      ...p('users', 'read', 'write', 'delete', 'invite'),
      ...p('settings', 'read', 'write'),
      ...p('remote', 'access'),
      ...p('topology', 'read', 'write'),
      ...p('backup', 'read', 'write'),
      ...p('audit', 'read', 'export'),
      ...p('vulnerabilities', 'accept_risk'),
      ...p('api_keys', 'read'),
    ],
  },
  {
    id: '00000000-0000-4000-8000-000000000005',
    name: 'Organization Technician',
    appliesTo: 'organization',
    forceMfa: false,
    description: 'Day-to-day device work in one organisation',
    permissions: technician,
  },
  {
    id: '00000000-0000-4000-8000-000000000006',
    name: 'Organization Viewer',
    appliesTo: 'organization',
    forceMfa: false,
    description: 'Read-only access to one organisation',
    permissions: viewer,
  },
] as const satisfies readonly {
  id: string;
  name: string;
  appliesTo: 'partner' | 'organization';
  forceMfa: boolean;
  description: string;
  permissions: readonly PermissionKey[];
}[];

export const PARTNER_ADMIN_ROLE_ID = SYSTEM_ROLES[0].id;
export const ORG_ADMIN_ROLE_ID = SYSTEM_ROLES[3].id;

/** Canonicalises a wire action (`view` → `read`, ...). Returns null for an unknown verb. */
export function canonicalAction(action: string): Action | null {
  if ((ACTIONS as readonly string[]).includes(action)) return action as Action;
  return (ACTION_ALIASES as Record<string, Action>)[action] ?? null;
}

export function isCatalogued(resource: string, action: string): boolean {
  return (RESOURCES as readonly string[]).includes(resource) && action in CATALOG[resource as Resource];
}
