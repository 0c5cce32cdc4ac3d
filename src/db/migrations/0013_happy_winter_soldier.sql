CREATE TABLE "scim_group_members" (
	"partner_id" uuid NOT NULL,
	"group_id" uuid NOT NULL,
	"scim_user_id" uuid NOT NULL,
	CONSTRAINT "scim_group_members_group_id_scim_user_id_pk" PRIMARY KEY("group_id","scim_user_id")
);
--> statement-breakpoint
CREATE TABLE "scim_groups" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"org_id" uuid,
	"display_name" varchar(255) NOT NULL,
	"external_id" varchar(255),
	"role_id" uuid,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "scim_groups_name_nonblank" CHECK (length(btrim("scim_groups"."display_name")) > 0)
);
--> statement-breakpoint
CREATE TABLE "scim_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"org_id" uuid,
	"name" varchar(255) NOT NULL,
	"token_hash" varchar(64) NOT NULL,
	"hint" varchar(16) NOT NULL,
	"default_role_id" uuid NOT NULL,
	"send_invitations" boolean DEFAULT true NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "scim_tokens_hash_format" CHECK ("scim_tokens"."token_hash" ~ '^[0-9a-f]{64}$'),
	CONSTRAINT "scim_tokens_name_nonblank" CHECK (length(btrim("scim_tokens"."name")) > 0)
);
--> statement-breakpoint
CREATE TABLE "scim_users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"org_id" uuid,
	"user_id" uuid NOT NULL,
	"owns_account" boolean NOT NULL,
	"user_name" varchar(255) NOT NULL,
	"external_id" varchar(255),
	"display_name" varchar(255),
	"given_name" varchar(255),
	"family_name" varchar(255),
	"emails" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"active" boolean NOT NULL,
	"default_role_id" uuid NOT NULL,
	"suspended" jsonb,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "scim_group_members" ADD CONSTRAINT "scim_group_members_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_group_members" ADD CONSTRAINT "scim_group_members_group_id_scim_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."scim_groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_group_members" ADD CONSTRAINT "scim_group_members_scim_user_id_scim_users_id_fk" FOREIGN KEY ("scim_user_id") REFERENCES "public"."scim_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_groups" ADD CONSTRAINT "scim_groups_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_groups" ADD CONSTRAINT "scim_groups_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_groups" ADD CONSTRAINT "scim_groups_role_id_roles_id_fk" FOREIGN KEY ("role_id") REFERENCES "public"."roles"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_tokens" ADD CONSTRAINT "scim_tokens_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_tokens" ADD CONSTRAINT "scim_tokens_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_tokens" ADD CONSTRAINT "scim_tokens_default_role_id_roles_id_fk" FOREIGN KEY ("default_role_id") REFERENCES "public"."roles"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_tokens" ADD CONSTRAINT "scim_tokens_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_default_role_id_roles_id_fk" FOREIGN KEY ("default_role_id") REFERENCES "public"."roles"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "scim_group_members_user_idx" ON "scim_group_members" USING btree ("scim_user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_groups_partner_name_key" ON "scim_groups" USING btree ("partner_id",lower("display_name")) WHERE "scim_groups"."org_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_groups_org_name_key" ON "scim_groups" USING btree ("org_id",lower("display_name")) WHERE "scim_groups"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "scim_groups_partner_created_idx" ON "scim_groups" USING btree ("partner_id","org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "scim_groups_role_idx" ON "scim_groups" USING btree ("role_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_tokens_hash_key" ON "scim_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "scim_tokens_partner_created_idx" ON "scim_tokens" USING btree ("partner_id","created_at","id");--> statement-breakpoint
CREATE INDEX "scim_tokens_role_idx" ON "scim_tokens" USING btree ("default_role_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_partner_user_name_key" ON "scim_users" USING btree ("partner_id",lower("user_name")) WHERE "scim_users"."org_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_org_user_name_key" ON "scim_users" USING btree ("org_id",lower("user_name")) WHERE "scim_users"."org_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_partner_external_id_key" ON "scim_users" USING btree ("partner_id","external_id") WHERE "scim_users"."org_id" is null and "scim_users"."external_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_org_external_id_key" ON "scim_users" USING btree ("org_id","external_id") WHERE "scim_users"."org_id" is not null and "scim_users"."external_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_partner_account_key" ON "scim_users" USING btree ("partner_id","user_id") WHERE "scim_users"."org_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_org_account_key" ON "scim_users" USING btree ("org_id","user_id") WHERE "scim_users"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "scim_users_partner_created_idx" ON "scim_users" USING btree ("partner_id","org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "scim_users_user_idx" ON "scim_users" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "scim_users_role_idx" ON "scim_users" USING btree ("default_role_id");