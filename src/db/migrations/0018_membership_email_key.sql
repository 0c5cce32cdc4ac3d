ALTER TABLE "organization_users" ADD COLUMN "email_key" varchar(255) DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "partner_users" ADD COLUMN "email_key" varchar(255) DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX "organization_users_org_email_key_idx" ON "organization_users" USING btree ("org_id","email_key","user_id");--> statement-breakpoint
CREATE INDEX "partner_users_partner_email_key_idx" ON "partner_users" USING btree ("partner_id","email_key","user_id");--> statement-breakpoint
-- email_key is the member list's sort key (lower(users.email)) on the membership row: set from the user whenever a
-- membership is written (any value a writer gives is replaced), rewritten on every membership when the e-mail changes.
CREATE OR REPLACE FUNCTION gh_membership_email_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.email_key := coalesce((SELECT lower(email) FROM users WHERE id = NEW.user_id), '');
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gh_user_email_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE partner_users SET email_key = lower(NEW.email) WHERE user_id = NEW.id;
  UPDATE organization_users SET email_key = lower(NEW.email) WHERE user_id = NEW.id;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER partner_users_email_key BEFORE INSERT OR UPDATE OF user_id, email_key ON "partner_users" FOR EACH ROW EXECUTE FUNCTION gh_membership_email_key();
--> statement-breakpoint
CREATE TRIGGER organization_users_email_key BEFORE INSERT OR UPDATE OF user_id, email_key ON "organization_users" FOR EACH ROW EXECUTE FUNCTION gh_membership_email_key();
--> statement-breakpoint
CREATE TRIGGER users_email_key AFTER UPDATE OF email ON "users" FOR EACH ROW WHEN (lower(OLD.email) IS DISTINCT FROM lower(NEW.email)) EXECUTE FUNCTION gh_user_email_key();
--> statement-breakpoint
UPDATE "partner_users" pu SET email_key = lower(u.email) FROM "users" u WHERE u.id = pu.user_id;
--> statement-breakpoint
UPDATE "organization_users" ou SET email_key = lower(u.email) FROM "users" u WHERE u.id = ou.user_id;
