ALTER TABLE "audit_logs" ADD COLUMN "partner_hidden" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_logs" ADD COLUMN "by_partner" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "service_accounts" ADD COLUMN "made_by_partner" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "made_by_partner" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "scim_tokens" ADD COLUMN "made_by_partner" boolean DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE "service_accounts" x SET "made_by_partner" = true WHERE x.org_id IS NULL OR (EXISTS (SELECT 1 FROM partner_users pu WHERE pu.partner_id = x.partner_id AND pu.user_id = x.created_by) AND NOT EXISTS (SELECT 1 FROM organization_users ou WHERE ou.org_id = x.org_id AND ou.user_id = x.created_by));
--> statement-breakpoint
UPDATE "webhooks" x SET "made_by_partner" = true WHERE x.org_id IS NULL OR (EXISTS (SELECT 1 FROM partner_users pu WHERE pu.partner_id = x.partner_id AND pu.user_id = x.created_by) AND NOT EXISTS (SELECT 1 FROM organization_users ou WHERE ou.org_id = x.org_id AND ou.user_id = x.created_by));
--> statement-breakpoint
UPDATE "scim_tokens" x SET "made_by_partner" = true WHERE x.org_id IS NULL OR (EXISTS (SELECT 1 FROM partner_users pu WHERE pu.partner_id = x.partner_id AND pu.user_id = x.created_by) AND NOT EXISTS (SELECT 1 FROM organization_users ou WHERE ou.org_id = x.org_id AND ou.user_id = x.created_by));
