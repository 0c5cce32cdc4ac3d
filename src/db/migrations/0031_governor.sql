CREATE TABLE "co_sign_requests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"principal_type" varchar(16) NOT NULL,
	"principal_id" uuid NOT NULL,
	"principal_name" varchar(255) NOT NULL,
	"reason" varchar(500) NOT NULL,
	"actions" integer NOT NULL,
	"remaining" integer NOT NULL,
	"status" varchar(16) DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"approved_by" uuid,
	"approved_by_name" varchar(255),
	"approved_at" timestamp with time zone,
	"unlock_expires_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "governor_marks" (
	"key" varchar(256) NOT NULL,
	"member" varchar(64) NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "governor_marks_key_member_pk" PRIMARY KEY("key","member")
);
--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "freeze" jsonb;--> statement-breakpoint
ALTER TABLE "partners" ADD COLUMN "freeze" jsonb;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "auth_method" varchar(16);--> statement-breakpoint
ALTER TABLE "co_sign_requests" ADD CONSTRAINT "co_sign_requests_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "co_sign_requests" ADD CONSTRAINT "co_sign_requests_approved_by_users_id_fk" FOREIGN KEY ("approved_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "co_sign_requests_partner_idx" ON "co_sign_requests" USING btree ("partner_id","created_at");--> statement-breakpoint
CREATE INDEX "co_sign_requests_principal_idx" ON "co_sign_requests" USING btree ("principal_id","unlock_expires_at") WHERE "co_sign_requests"."status" = 'approved' and "co_sign_requests"."remaining" > 0;--> statement-breakpoint
CREATE INDEX "governor_marks_key_at_idx" ON "governor_marks" USING btree ("key","at");--> statement-breakpoint
ALTER TABLE "co_sign_requests" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "co_sign_requests" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
-- A partner's co-sign requests are its own: its members and service accounts see them, no other tenant does.
CREATE POLICY gh_tenant ON "co_sign_requests" USING (gh_rls_system() OR (gh_rls_row(partner_id, NULL)));
