ALTER TYPE "public"."org_access" ADD VALUE 'all_except';--> statement-breakpoint
CREATE TABLE "access_group_members" (
	"partner_id" uuid NOT NULL,
	"group_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "access_group_members_group_id_user_id_pk" PRIMARY KEY("group_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "access_groups" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"name" varchar(200) NOT NULL,
	"scim_group_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "access_groups_name_nonblank" CHECK (length(btrim("access_groups"."name")) > 0)
);
--> statement-breakpoint
CREATE TABLE "relationship_access_groups" (
	"partner_id" uuid NOT NULL,
	"relationship_id" uuid NOT NULL,
	"group_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "relationship_access_groups_relationship_id_group_id_pk" PRIMARY KEY("relationship_id","group_id")
);
--> statement-breakpoint
ALTER TABLE "relationships" ADD COLUMN "groups_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "access_group_members" ADD CONSTRAINT "access_group_members_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_group_members" ADD CONSTRAINT "access_group_members_group_id_access_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."access_groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_group_members" ADD CONSTRAINT "access_group_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_groups" ADD CONSTRAINT "access_groups_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_groups" ADD CONSTRAINT "access_groups_scim_group_id_scim_groups_id_fk" FOREIGN KEY ("scim_group_id") REFERENCES "public"."scim_groups"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relationship_access_groups" ADD CONSTRAINT "relationship_access_groups_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relationship_access_groups" ADD CONSTRAINT "relationship_access_groups_relationship_id_relationships_id_fk" FOREIGN KEY ("relationship_id") REFERENCES "public"."relationships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relationship_access_groups" ADD CONSTRAINT "relationship_access_groups_group_id_access_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."access_groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_group_members_user_idx" ON "access_group_members" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "access_groups_partner_name_key" ON "access_groups" USING btree ("partner_id",lower("name"));--> statement-breakpoint
CREATE INDEX "access_groups_partner_created_idx" ON "access_groups" USING btree ("partner_id","created_at","id");--> statement-breakpoint
CREATE INDEX "access_groups_scim_idx" ON "access_groups" USING btree ("scim_group_id");--> statement-breakpoint
CREATE INDEX "relationship_access_groups_group_idx" ON "relationship_access_groups" USING btree ("group_id");--> statement-breakpoint
ALTER TABLE "access_groups" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "access_groups" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "access_groups" USING (gh_rls_system() OR (gh_rls_row(partner_id, NULL)));
--> statement-breakpoint
ALTER TABLE "access_group_members" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "access_group_members" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "access_group_members" USING (gh_rls_system() OR (gh_rls_row(partner_id, NULL)));
--> statement-breakpoint
ALTER TABLE "relationship_access_groups" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "relationship_access_groups" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY gh_tenant ON "relationship_access_groups" USING (gh_rls_system() OR (gh_rls_row(partner_id, NULL)));
--> statement-breakpoint
-- Partner sessions read their groups and the groups of the relationships in force with every request.
CREATE TRIGGER access_group_members_liveness AFTER INSERT OR UPDATE OR DELETE ON "access_group_members" FOR EACH ROW EXECUTE FUNCTION gh_liveness_changed('member');
--> statement-breakpoint
CREATE TRIGGER access_groups_liveness AFTER INSERT OR UPDATE OR DELETE ON "access_groups" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER relationship_access_groups_liveness AFTER INSERT OR UPDATE OR DELETE ON "relationship_access_groups" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER scim_group_members_liveness AFTER INSERT OR UPDATE OR DELETE ON "scim_group_members" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
-- gatehouse.org_ids may also be '!' followed by a comma-separated list: every organisation of the partner except
-- those (a partner member with orgAccess all_except).
CREATE OR REPLACE FUNCTION gh_rls_org_ids() RETURNS uuid[] LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN coalesce(current_setting('gatehouse.org_ids', true), '') IN ('', '*')
                   OR current_setting('gatehouse.org_ids', true) LIKE '!%' THEN '{}'::uuid[]
              ELSE string_to_array(current_setting('gatehouse.org_ids', true), ',')::uuid[] END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gh_rls_org_excluded() RETURNS uuid[] LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN current_setting('gatehouse.org_ids', true) LIKE '!_%'
              THEN string_to_array(substr(current_setting('gatehouse.org_ids', true), 2), ',')::uuid[]
              ELSE '{}'::uuid[] END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gh_rls_org(org uuid) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT org IS NULL OR current_setting('gatehouse.org_ids', true) = '*'
    OR (current_setting('gatehouse.org_ids', true) LIKE '!%' AND NOT org = ANY (gh_rls_org_excluded()))
    OR org = ANY (gh_rls_org_ids())
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gh_rls_row(partner uuid, org uuid) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF coalesce(current_setting('gatehouse.ctx', true), '') LIKE 'system:%' THEN RETURN true; END IF;
  IF partner IS NULL THEN
    RETURN org IS NOT NULL AND EXISTS (SELECT 1 FROM organizations o WHERE o.id = org);
  END IF;
  IF partner IS DISTINCT FROM nullif(current_setting('gatehouse.partner_id', true), '')::uuid THEN RETURN false; END IF;
  IF org IS NULL OR current_setting('gatehouse.org_ids', true) = '*' THEN RETURN true; END IF;
  IF current_setting('gatehouse.org_ids', true) LIKE '!%' THEN RETURN NOT org = ANY (gh_rls_org_excluded()); END IF;
  RETURN org = ANY (gh_rls_org_ids());
END;
$$;

--> statement-breakpoint
-- The decision epoch moves with what the access groups add to a decision.
CREATE TRIGGER access_groups_decision_epoch AFTER INSERT OR UPDATE OR DELETE ON "access_groups" FOR EACH STATEMENT EXECUTE FUNCTION gh_decision_epoch_bump();--> statement-breakpoint
CREATE TRIGGER access_groups_decision_epoch_truncate AFTER TRUNCATE ON "access_groups" FOR EACH STATEMENT EXECUTE FUNCTION gh_decision_epoch_bump();--> statement-breakpoint
CREATE TRIGGER access_group_members_decision_epoch AFTER INSERT OR UPDATE OR DELETE ON "access_group_members" FOR EACH STATEMENT EXECUTE FUNCTION gh_decision_epoch_bump();--> statement-breakpoint
CREATE TRIGGER access_group_members_decision_epoch_truncate AFTER TRUNCATE ON "access_group_members" FOR EACH STATEMENT EXECUTE FUNCTION gh_decision_epoch_bump();--> statement-breakpoint
CREATE TRIGGER relationship_access_groups_decision_epoch AFTER INSERT OR UPDATE OR DELETE ON "relationship_access_groups" FOR EACH STATEMENT EXECUTE FUNCTION gh_decision_epoch_bump();--> statement-breakpoint
CREATE TRIGGER relationship_access_groups_decision_epoch_truncate AFTER TRUNCATE ON "relationship_access_groups" FOR EACH STATEMENT EXECUTE FUNCTION gh_decision_epoch_bump();--> statement-breakpoint
CREATE TRIGGER scim_group_members_decision_epoch AFTER INSERT OR UPDATE OR DELETE ON "scim_group_members" FOR EACH STATEMENT EXECUTE FUNCTION gh_decision_epoch_bump();--> statement-breakpoint
CREATE TRIGGER scim_group_members_decision_epoch_truncate AFTER TRUNCATE ON "scim_group_members" FOR EACH STATEMENT EXECUTE FUNCTION gh_decision_epoch_bump();
