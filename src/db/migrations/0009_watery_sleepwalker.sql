ALTER TYPE "public"."flow_kind" ADD VALUE 'sso_link';--> statement-breakpoint
ALTER TYPE "public"."flow_kind" ADD VALUE 'saml_return';--> statement-breakpoint
ALTER TABLE "sso_providers" ADD COLUMN "trust_idp_mfa" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sso_providers" ADD COLUMN "last_tested_ok_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sso_providers" ADD COLUMN "metadata_xml" text;--> statement-breakpoint
ALTER TABLE "sso_providers" ADD COLUMN "metadata_url" varchar(2048);--> statement-breakpoint
ALTER TABLE "sso_providers" ADD COLUMN "idp_certs" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "sso_providers" ADD COLUMN "idp_sso_url" varchar(2048);--> statement-breakpoint
ALTER TABLE "sso_providers" ADD COLUMN "email_attribute" varchar(255);--> statement-breakpoint
ALTER TABLE "sso_providers" ADD COLUMN "name_attribute" varchar(255);