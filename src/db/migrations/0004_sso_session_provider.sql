ALTER TABLE "sso_sessions" DROP CONSTRAINT "sso_sessions_provider_id_sso_providers_id_fk";
--> statement-breakpoint
ALTER TABLE "sso_sessions" ALTER COLUMN "provider_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "sso_sessions" ADD CONSTRAINT "sso_sessions_provider_id_sso_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."sso_providers"("id") ON DELETE set null ON UPDATE no action;