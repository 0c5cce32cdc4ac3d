-- Row security: a named system context passes the policy before any per-row function call.
-- gh_rls_row is PL/pgSQL on purpose (the planner must not fold it into the query's own tenant condition), so it is a
-- function call per row, even where its first line returns true for a system context. A count over ten thousand
-- memberships in a system context paid ~1 µs per row for nothing. gh_rls_system() is SQL without a column: inlined,
-- evaluated first (OR keeps its order), so a system context reads rows at no per-row cost. A tenant context is
-- unchanged: the check is false and the same expression as before decides.
ALTER POLICY gh_tenant ON "access_grants" USING (gh_rls_system() OR (gh_rls_row(partner_id, NULL) OR user_id = gh_rls_user()));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "access_requests" USING (gh_rls_system() OR (gh_rls_row(partner_id, NULL) OR user_id = gh_rls_user()));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "audit_logs" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "config_items" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "contacts" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "custom_field_definitions" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "device_groups" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "devices" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "enrollment_keys" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "organization_users" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id) OR user_id = gh_rls_user()));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "roles" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id) OR (partner_id IS NULL AND org_id IS NULL)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "scim_groups" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "scim_tokens" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "scim_users" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "scripts" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "service_accounts" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "sessions" USING (gh_rls_system() OR (gh_rls_session(partner_id, org_id, user_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "sites" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "sso_providers" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "webhooks" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "partner_users" USING (gh_rls_system() OR (gh_rls_row(partner_id, NULL) OR user_id = gh_rls_user()));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "scim_group_members" USING (gh_rls_system() OR (gh_rls_row(partner_id, NULL)));
--> statement-breakpoint
ALTER POLICY gh_tenant ON "organizations" USING (gh_rls_system() OR (gh_rls_row(partner_id, id) OR EXISTS (SELECT 1 FROM organization_users ou WHERE ou.org_id = organizations.id AND ou.user_id = gh_rls_user())));
