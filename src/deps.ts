// The service container: built once per process (or per test app) and handed to every module.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database, Db } from './db/connect.js';
import { makeAuthenticate, type AuthenticateDeps } from './http/authenticate.js';
import { LivenessCache } from './access/liveness-cache.js';
import { createMailer, type Mailer } from './platform/mail.js';
import { createSmsSender, type SmsSender } from './platform/sms.js';
import { OidcClients } from './modules/sso/oidc.js';
import { RateLimits } from './http/rate-limit.js';
import { AuditWriter } from './modules/audit/writer.js';
import { KeyRing } from './modules/auth/keys.js';
import { TokenService } from './access/tokens.js';
import { RoleCache } from './access/resolver.js';
import { systemClock, type Clock } from './platform/clock.js';
import { DatabaseStore, RedisStore, type SharedStore } from './platform/kv.js';
import { createMetrics, timedStore, type Metrics } from './platform/metrics.js';
import { MailOutbox } from './platform/mail-outbox.js';
import { parseKey, SecretBox } from './platform/secret-box.js';
import { WebhookWorker } from './modules/webhooks/worker.js';
import { StandingAccessLapse } from './modules/governance/lapse.js';
import { RelationshipNotices } from './modules/relationships/notices.js';
import { apiKeyAuthenticator } from './modules/service-accounts/principal.js';
import { readBacklog } from './db/backlog.js';
import { GovernorCache } from './access/governor-cache.js';
import { Governor } from './access/governor.js';
import { DatabaseBudgetStore, RedisBudgetStore } from './platform/budget-store.js';

export interface Deps {
  config: Config;
  database: Database;
  db: Db;
  store: SharedStore;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  keys: KeyRing;
  tokens: TokenService;
  roleCache: RoleCache;
  audit: AuditWriter;
  authenticate: ReturnType<typeof makeAuthenticate>;
  authContext: AuthenticateDeps;
  mailer: Mailer;
  /** Mail goes through the outbox: enqueue in the transaction, kick() after the commit. */
  outbox: MailOutbox;
  /** Audit webhook deliveries: queued by the audit writer in the record's transaction, sent by this worker. */
  webhooks: WebhookWorker;
  /** Unused standing access lapses to eligible: a periodic sweep; sweep() runs a pass now. */
  lapse: StandingAccessLapse;
  /** Relationship expiry: the 30/7/1-day and ended notices, auto-extension, request lapse; sweep() runs a pass now. */
  relationshipNotices: RelationshipNotices;
  sms: SmsSender;
  oidc: OidcClients;
  limits: RateLimits;
  metrics: Metrics;
  /** The blast-radius governor: budgets on destructive actions (freezes ride on each principal from its cache). */
  governor: Governor;
}

/** The development key lives beside the embedded database; production must provide ENCRYPTION_KEY. */
export function encryptionKey(config: Config, logger: Pick<Logger, 'warn'>): Buffer {
  if (config.encryptionKey) return parseKey(config.encryptionKey);
  if (config.isProduction) throw new Error('ENCRYPTION_KEY is required in production');
  const file = join(config.dataDir, 'encryption.key');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
    logger.warn({ file }, 'generated a development encryption key; set ENCRYPTION_KEY in production');
  }
  return parseKey(readFileSync(file, 'utf8').trim());
}

export interface DepsOptions {
  clock?: Clock;
  /** Namespace for shared-store keys (tests share one Redis). */
  storePrefix?: string;
}

export async function buildDeps(
  config: Config,
  database: Database,
  logger: Logger,
  opts: DepsOptions = {},
): Promise<Deps> {
  const clock = opts.clock ?? systemClock;
  const box = new SecretBox(encryptionKey(config, logger), config.previousEncryptionKeys.map(parseKey));
  const prefix = opts.storePrefix ?? 'gh:';
  const metrics = createMetrics();
  if (database.poolStats) metrics.watchPool(() => database.poolStats!());
  metrics.watchBacklog(() => readBacklog(database.db));
  const redis = config.redisUrl ? RedisStore.connect(config.redisUrl, prefix) : null;
  const store: SharedStore = timedStore(redis ?? new DatabaseStore(database.db, prefix), metrics);
  const governor = new Governor({
    store: redis ? new RedisBudgetStore(redis.redis, prefix) : new DatabaseBudgetStore(prefix),
    cache: new GovernorCache(database.db),
    clock,
    stepUpMaxAge: config.stepUpMaxAge,
  });
  const keys = new KeyRing(database.db, box, config.accessTokenTtl * 1000 + 120_000);
  await keys.init();
  const tokens = new TokenService(keys, config.publicUrl, config.accessTokenTtl, () => clock.now());
  const roleCache = new RoleCache(database.db);
  const webhooks = new WebhookWorker(database.db, box, logger, clock, metrics, {
    leaseMs: config.webhooksLeaseSeconds * 1000,
    reach: config.webhooksOutbound,
  });
  const audit = new AuditWriter(clock, (record) => {
    metrics.observeAudit(record);
    webhooks.noteQueued();
  });
  const limits = new RateLimits(store, clock, config.rateLimits, (limit) => metrics.rateLimited.inc({ limit }));
  const keyAuth = { db: database.db, roleCache, clock, limits, audit, apiKeyEnvironment: config.apiKeyEnvironment };
  const authContext: AuthenticateDeps = {
    ...keyAuth,
    tokens,
    enable2fa: config.enable2fa,
    enrollUrl: `${config.appUrl}/account/security`,
    // The pipeline knows no feature: service accounts' credentials are checked through this interface.
    apiKeys: apiKeyAuthenticator(keyAuth),
    liveness: new LivenessCache(),
    governance: governor.cache,
    governor,
  };
  const mailer = createMailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    logger,
    isProduction: config.isProduction,
  });
  const outbox = new MailOutbox(database.db, box, mailer, logger, clock, metrics, config.mailLeaseSeconds * 1000);
  return {
    config,
    database,
    db: database.db,
    store,
    clock,
    logger,
    box,
    keys,
    tokens,
    roleCache,
    audit,
    limits,
    metrics,
    governor,
    authContext,
    authenticate: makeAuthenticate(authContext),
    sms: createSmsSender(config, logger),
    oidc: new OidcClients(config.ssoOutbound),
    mailer,
    webhooks,
    outbox,
    lapse: new StandingAccessLapse({ db: database.db, clock, logger, audit, outbox, appUrl: config.appUrl }),
    relationshipNotices: new RelationshipNotices({
      db: database.db,
      clock,
      logger,
      audit,
      outbox,
      appUrl: config.appUrl,
    }),
  };
}
