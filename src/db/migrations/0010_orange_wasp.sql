CREATE TABLE "mail_outbox" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"template" varchar(64) NOT NULL,
	"sealed" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"not_before" timestamp (3) with time zone NOT NULL,
	"leased_until" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	"failed_at" timestamp (3) with time zone,
	"last_error" varchar(300)
);
--> statement-breakpoint
CREATE INDEX "mail_outbox_due_idx" ON "mail_outbox" USING btree ("not_before") WHERE "mail_outbox"."failed_at" is null;