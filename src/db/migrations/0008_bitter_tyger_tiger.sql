CREATE INDEX "devices_org_lhostname_id_idx" ON "devices" USING btree ("org_id",lower("hostname"),"id");--> statement-breakpoint
CREATE INDEX "devices_lhostname_id_idx" ON "devices" USING btree (lower("hostname"),"id");--> statement-breakpoint
CREATE INDEX "organizations_partner_lname_id_idx" ON "organizations" USING btree ("partner_id",lower("name"),"id");