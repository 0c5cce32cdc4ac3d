CREATE TYPE "public"."membership_status" AS ENUM('active', 'pending');--> statement-breakpoint
ALTER TABLE "organization_users" ADD COLUMN "status" "membership_status" DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "organization_users" ADD COLUMN "invited_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "partner_users" ADD COLUMN "status" "membership_status" DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "partner_users" ADD COLUMN "invited_at" timestamp with time zone;