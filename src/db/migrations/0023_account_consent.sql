ALTER TYPE "public"."flow_kind" ADD VALUE 'email_verify';--> statement-breakpoint
ALTER TYPE "public"."flow_kind" ADD VALUE 'email_change';--> statement-breakpoint
ALTER TYPE "public"."flow_kind" ADD VALUE 'membership_invite';--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Accounts that exist before addresses were proven keep working as they did: their addresses count as proven.
UPDATE "users" SET "email_verified" = true;--> statement-breakpoint
-- A person sees an organisation through their own membership only once they accepted it (a pending one grants nothing).
ALTER POLICY gh_tenant ON "organizations" USING (gh_rls_system() OR (gh_rls_row(partner_id, id) OR EXISTS (SELECT 1 FROM organization_users ou WHERE ou.org_id = organizations.id AND ou.user_id = gh_rls_user() AND ou.status = 'active')));
