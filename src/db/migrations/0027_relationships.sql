CREATE TYPE "public"."relationship_status" AS ENUM('draft', 'approval_pending', 'active', 'declined', 'terminated', 'expired');--> statement-breakpoint
CREATE TABLE "relationships" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"name" varchar(200) NOT NULL,
	"role_ids" uuid[] NOT NULL,
	"site_ids" uuid[],
	"device_group_ids" uuid[],
	"duration" varchar(32) NOT NULL,
	"auto_extend" boolean DEFAULT false NOT NULL,
	"status" "relationship_status" DEFAULT 'draft' NOT NULL,
	"request_expires_at" timestamp with time zone,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"created_by" uuid,
	"decided_by" uuid,
	"terminated_by" uuid,
	"noticed_days" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "relationships" ADD CONSTRAINT "relationships_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relationships" ADD CONSTRAINT "relationships_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relationships" ADD CONSTRAINT "relationships_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relationships" ADD CONSTRAINT "relationships_decided_by_users_id_fk" FOREIGN KEY ("decided_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relationships" ADD CONSTRAINT "relationships_terminated_by_users_id_fk" FOREIGN KEY ("terminated_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "relationships_partner_idx" ON "relationships" USING btree ("partner_id","status");--> statement-breakpoint
CREATE INDEX "relationships_org_idx" ON "relationships" USING btree ("org_id","status");--> statement-breakpoint
CREATE INDEX "relationships_ends_idx" ON "relationships" USING btree ("ends_at") WHERE "relationships"."status" = 'active';--> statement-breakpoint
ALTER TABLE "relationships" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "relationships" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
-- The partner's members see the relationships of the organisations they reach; an organisation's members its own.
CREATE POLICY gh_tenant ON "relationships" USING (gh_rls_system() OR (gh_rls_row(partner_id, org_id)));
--> statement-breakpoint
-- Partner sessions read the relationships in force with every request: a change reaches every instance's liveness cache.
CREATE TRIGGER relationships_liveness AFTER INSERT OR UPDATE OR DELETE ON "relationships" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER relationships_liveness_truncate AFTER TRUNCATE ON "relationships" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
