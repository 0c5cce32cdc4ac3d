ALTER TABLE "device_groups" ADD COLUMN "partner_id" uuid;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "partner_id" uuid;--> statement-breakpoint
ALTER TABLE "organization_users" ADD COLUMN "partner_id" uuid;--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "partner_id" uuid;--> statement-breakpoint
ALTER TABLE "enrollment_keys" ADD COLUMN "partner_id" uuid;--> statement-breakpoint
-- Row-level security, the second wall behind the repositories' tenant filters.
-- Five org-keyed tables gain partner_id, filled by the database from the organisation like devices.partner_id, so
-- that every tenant table's policy is the same expression on its own columns (no policy reads another table's
-- policy-protected rows, which PostgreSQL refuses as recursion).
CREATE OR REPLACE FUNCTION gh_fill_partner_from_org() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.partner_id := (SELECT partner_id FROM organizations WHERE id = NEW.org_id);
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER contacts_partner BEFORE INSERT OR UPDATE OF org_id, partner_id ON "contacts" FOR EACH ROW EXECUTE FUNCTION gh_fill_partner_from_org();
--> statement-breakpoint
UPDATE "contacts" x SET partner_id = o.partner_id FROM "organizations" o WHERE o.id = x.org_id;
--> statement-breakpoint
CREATE TRIGGER device_groups_partner BEFORE INSERT OR UPDATE OF org_id, partner_id ON "device_groups" FOR EACH ROW EXECUTE FUNCTION gh_fill_partner_from_org();
--> statement-breakpoint
UPDATE "device_groups" x SET partner_id = o.partner_id FROM "organizations" o WHERE o.id = x.org_id;
--> statement-breakpoint
CREATE TRIGGER enrollment_keys_partner BEFORE INSERT OR UPDATE OF org_id, partner_id ON "enrollment_keys" FOR EACH ROW EXECUTE FUNCTION gh_fill_partner_from_org();
--> statement-breakpoint
UPDATE "enrollment_keys" x SET partner_id = o.partner_id FROM "organizations" o WHERE o.id = x.org_id;
--> statement-breakpoint
CREATE TRIGGER organization_users_partner BEFORE INSERT OR UPDATE OF org_id, partner_id ON "organization_users" FOR EACH ROW EXECUTE FUNCTION gh_fill_partner_from_org();
--> statement-breakpoint
UPDATE "organization_users" x SET partner_id = o.partner_id FROM "organizations" o WHERE o.id = x.org_id;
--> statement-breakpoint
CREATE TRIGGER sites_partner BEFORE INSERT OR UPDATE OF org_id, partner_id ON "sites" FOR EACH ROW EXECUTE FUNCTION gh_fill_partner_from_org();
--> statement-breakpoint
UPDATE "sites" x SET partner_id = o.partner_id FROM "organizations" o WHERE o.id = x.org_id;
--> statement-breakpoint
-- The session settings the application sets from the caller's Scope before each statement runs (src/db/row-security.ts):
--   gatehouse.ctx         'tenant', or 'system:<name>' for a named flow that acts before a tenant is known
--   gatehouse.partner_id  the caller's partner ('' when none)
--   gatehouse.org_ids     '*' (every organisation of the partner) or a comma-separated list of organisation ids
--   gatehouse.user_id     the acting person (their own sessions, memberships and access requests, in any tenant)
-- Unset (a connection that never set them) sees no tenant row.
CREATE OR REPLACE FUNCTION gh_rls_system() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce(current_setting('gatehouse.ctx', true), '') LIKE 'system:%'
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gh_rls_partner() RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT nullif(current_setting('gatehouse.partner_id', true), '')::uuid
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gh_rls_user() RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT nullif(current_setting('gatehouse.user_id', true), '')::uuid
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gh_rls_org_ids() RETURNS uuid[] LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN coalesce(current_setting('gatehouse.org_ids', true), '') IN ('', '*') THEN '{}'::uuid[]
              ELSE string_to_array(current_setting('gatehouse.org_ids', true), ',')::uuid[] END
$$;
--> statement-breakpoint
-- An organisation (or no organisation: a partner-level row) the caller reaches within its partner.
CREATE OR REPLACE FUNCTION gh_rls_org(org uuid) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT org IS NULL OR current_setting('gatehouse.org_ids', true) = '*' OR org = ANY (gh_rls_org_ids())
$$;
--> statement-breakpoint
-- The policy of a row with these tenant columns, as one opaque call (PL/pgSQL is never inlined): the planner sees
-- a filter of default selectivity instead of an expression it multiplies with the query's own partner condition
-- into an estimate of one row (which turned ordered index scans of keyset pages into bitmap scans and sorts).
CREATE OR REPLACE FUNCTION gh_rls_row(partner uuid, org uuid) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF coalesce(current_setting('gatehouse.ctx', true), '') LIKE 'system:%' THEN RETURN true; END IF;
  -- A row with an organisation but no partner (an organisation's session, older organisation roles): visible when
  -- its organisation is (the organisations policy decides).
  IF partner IS NULL THEN
    RETURN org IS NOT NULL AND EXISTS (SELECT 1 FROM organizations o WHERE o.id = org);
  END IF;
  IF partner IS DISTINCT FROM nullif(current_setting('gatehouse.partner_id', true), '')::uuid THEN RETURN false; END IF;
  IF org IS NULL OR current_setting('gatehouse.org_ids', true) = '*' THEN RETURN true; END IF;
  RETURN org = ANY (gh_rls_org_ids());
END;
$$;
--> statement-breakpoint
-- A session: the caller's own, or in the caller's tenant (an organisation session carries org_id only).
CREATE OR REPLACE FUNCTION gh_rls_session(partner uuid, org uuid, owner uuid) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN owner = gh_rls_user() OR gh_rls_row(partner, org);
END;
$$;
--> statement-breakpoint
-- The application's sessions run as gatehouse_app, which owns nothing and cannot bypass row security; the migrations
-- run as the owner. Creating the role is tolerated when another database of the cluster made it first.
DO $$ BEGIN
  CREATE ROLE gatehouse_app NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  EXECUTE format('GRANT gatehouse_app TO %I', current_user);
EXCEPTION WHEN others THEN NULL;
END $$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO gatehouse_app;
--> statement-breakpoint
-- The applied-migrations list is read (readiness, `gatehouse db status`), never written, by the application.
GRANT USAGE ON SCHEMA drizzle TO gatehouse_app;
--> statement-breakpoint
GRANT SELECT ON ALL TABLES IN SCHEMA drizzle TO gatehouse_app;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO gatehouse_app;
--> statement-breakpoint
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO gatehouse_app;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO gatehouse_app;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO gatehouse_app;
--> statement-breakpoint
ALTER TABLE "access_grants" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "access_grants" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
-- Just-in-time requests and grants are the partner's workflow: every member of the partner may see them (the
-- service decides who approves); an organisation's admin too, for its customer approval.
CREATE POLICY gh_tenant ON "access_grants" USING (gh_rls_row(partner_id, NULL) OR user_id = gh_rls_user());
--> statement-breakpoint
ALTER TABLE "access_requests" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "access_requests" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "access_requests" USING (gh_rls_row(partner_id, NULL) OR user_id = gh_rls_user());
--> statement-breakpoint
ALTER TABLE "audit_logs" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "audit_logs" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "audit_logs" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "config_items" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "config_items" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "config_items" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "contacts" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "contacts" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "contacts" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "custom_field_definitions" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "custom_field_definitions" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "custom_field_definitions" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "device_groups" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "device_groups" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "device_groups" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "devices" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "devices" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "devices" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "enrollment_keys" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "enrollment_keys" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "enrollment_keys" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "organization_users" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "organization_users" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "organization_users" USING (gh_rls_row(partner_id, org_id) OR user_id = gh_rls_user());
--> statement-breakpoint
ALTER TABLE "roles" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "roles" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "roles" USING (gh_rls_row(partner_id, org_id) OR (partner_id IS NULL AND org_id IS NULL));
--> statement-breakpoint
ALTER TABLE "scim_groups" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "scim_groups" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "scim_groups" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "scim_tokens" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "scim_tokens" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "scim_tokens" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "scim_users" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "scim_users" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "scim_users" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "scripts" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "scripts" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "scripts" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "service_accounts" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "service_accounts" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "service_accounts" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "sessions" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "sessions" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "sessions" USING (gh_rls_session(partner_id, org_id, user_id));
--> statement-breakpoint
ALTER TABLE "sites" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "sites" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "sites" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "sso_providers" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "sso_providers" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "sso_providers" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "webhooks" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "webhooks" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "webhooks" USING (gh_rls_row(partner_id, org_id));
--> statement-breakpoint
ALTER TABLE "partner_users" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "partner_users" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "partner_users" USING (gh_rls_row(partner_id, NULL) OR user_id = gh_rls_user());
--> statement-breakpoint
ALTER TABLE "scim_group_members" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "scim_group_members" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "scim_group_members" USING (gh_rls_row(partner_id, NULL));
--> statement-breakpoint
ALTER TABLE "organizations" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "organizations" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
-- Also the organisations of the person's own memberships in other partners (the context switcher names them).
CREATE POLICY gh_tenant ON "organizations" USING (gh_rls_row(partner_id, id) OR EXISTS (SELECT 1 FROM organization_users ou WHERE ou.org_id = organizations.id AND ou.user_id = gh_rls_user()));
--> statement-breakpoint
-- Under row security, a condition with a function not marked LEAKPROOF is evaluated after the policy, so it can no
-- longer drive an index: the keyset pages on lower(...) fell back to sorting. lower(text) raises for no input, so it
-- is marked LEAKPROOF where the migration may (a superuser owner: the embedded database, CI); elsewhere the lists
-- stay correct and only lose that index use.
DO $$ BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    ALTER FUNCTION pg_catalog.lower(text) LEAKPROOF;
  END IF;
END $$;
