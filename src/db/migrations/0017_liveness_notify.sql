-- Every change to what the per-request liveness statement (src/http/authenticate.ts) reads is announced on the
-- channel gh_liveness, delivered on commit to every instance's liveness cache (src/http/liveness-cache.ts).
-- Payloads: 's:<session id>', 'u:<user id>' (every session of the user), '*' (every session).
-- A session update that only moves last_used_at is not announced (the per-minute last-seen write).
CREATE OR REPLACE FUNCTION gh_liveness_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' OR TG_ARGV[0] = 'all' THEN
    PERFORM pg_notify('gh_liveness', '*');
  ELSIF TG_ARGV[0] = 'session' THEN
    IF TG_OP = 'UPDATE' AND (to_jsonb(NEW) - 'last_used_at') = (to_jsonb(OLD) - 'last_used_at') THEN
      RETURN NULL;
    END IF;
    PERFORM pg_notify('gh_liveness', 's:' || OLD.id::text);
  ELSIF TG_ARGV[0] = 'user' THEN
    PERFORM pg_notify('gh_liveness', 'u:' || OLD.id::text);
  ELSE
    IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('gh_liveness', 'u:' || OLD.user_id::text); END IF;
    IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('gh_liveness', 'u:' || NEW.user_id::text); END IF;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER sessions_liveness AFTER UPDATE OR DELETE ON "sessions" FOR EACH ROW EXECUTE FUNCTION gh_liveness_changed('session');
--> statement-breakpoint
CREATE TRIGGER users_liveness AFTER UPDATE OR DELETE ON "users" FOR EACH ROW EXECUTE FUNCTION gh_liveness_changed('user');
--> statement-breakpoint
CREATE TRIGGER passkeys_liveness AFTER INSERT OR UPDATE OR DELETE ON "passkeys" FOR EACH ROW EXECUTE FUNCTION gh_liveness_changed('member');
--> statement-breakpoint
CREATE TRIGGER partner_users_liveness AFTER INSERT OR UPDATE OR DELETE ON "partner_users" FOR EACH ROW EXECUTE FUNCTION gh_liveness_changed('member');
--> statement-breakpoint
CREATE TRIGGER organization_users_liveness AFTER INSERT OR UPDATE OR DELETE ON "organization_users" FOR EACH ROW EXECUTE FUNCTION gh_liveness_changed('member');
--> statement-breakpoint
CREATE TRIGGER access_grants_liveness AFTER INSERT OR UPDATE OR DELETE ON "access_grants" FOR EACH ROW EXECUTE FUNCTION gh_liveness_changed('member');
--> statement-breakpoint
CREATE TRIGGER partners_liveness AFTER INSERT OR UPDATE OR DELETE ON "partners" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER organizations_liveness AFTER INSERT OR UPDATE OR DELETE ON "organizations" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER authz_state_liveness AFTER INSERT OR UPDATE OR DELETE ON "authz_state" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER sessions_liveness_truncate AFTER TRUNCATE ON "sessions" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER users_liveness_truncate AFTER TRUNCATE ON "users" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER passkeys_liveness_truncate AFTER TRUNCATE ON "passkeys" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER partner_users_liveness_truncate AFTER TRUNCATE ON "partner_users" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER organization_users_liveness_truncate AFTER TRUNCATE ON "organization_users" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER access_grants_liveness_truncate AFTER TRUNCATE ON "access_grants" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER partners_liveness_truncate AFTER TRUNCATE ON "partners" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
--> statement-breakpoint
CREATE TRIGGER organizations_liveness_truncate AFTER TRUNCATE ON "organizations" FOR EACH STATEMENT EXECUTE FUNCTION gh_liveness_changed('all');
