ALTER TABLE "devices" ADD COLUMN "partner_id" uuid;--> statement-breakpoint
CREATE INDEX "devices_partner_lhostname_id_idx" ON "devices" USING btree ("partner_id",lower("hostname"),"id");--> statement-breakpoint
-- partner_id on devices is the organisation's partner, set by the database whatever the insert path (any value a
-- writer gives is replaced); a device never changes organisation. Backfilled for the devices already enrolled.
CREATE OR REPLACE FUNCTION gh_device_partner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.partner_id := (SELECT partner_id FROM organizations WHERE id = NEW.org_id);
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER devices_partner BEFORE INSERT OR UPDATE OF org_id, partner_id ON "devices" FOR EACH ROW EXECUTE FUNCTION gh_device_partner();
--> statement-breakpoint
UPDATE "devices" d SET partner_id = o.partner_id FROM "organizations" o WHERE o.id = d.org_id;
