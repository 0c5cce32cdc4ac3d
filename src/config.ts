// The only module that reads process.env: parsed once, validated, frozen.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import type { OutboundReach } from './platform/outbound.js';

const bool = (dflt: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
    .default(dflt ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes');

const seconds = (dflt: number, min: number, max: number) =>
  z.coerce.number({ message: 'must be a whole number of seconds' }).int().min(min).max(max).default(dflt);

const httpUrl = () =>
  z
    .string()
    .url({ message: 'must be an absolute http(s) URL' })
    .refine((v) => /^https?:\/\//.test(v), 'must use http or https');
const url = (dflt: string) => httpUrl().default(dflt);

export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_ROW_SECURITY: z.enum(['on', 'off']).default('on'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  // Unset: the listener's own address (listenerOrigin), so links follow PORT and HOST.
  PUBLIC_URL: httpUrl().optional(),
  APP_URL: httpUrl().optional(),
  ENCRYPTION_KEY: z.string().optional(),
  ENCRYPTION_KEYS_PREVIOUS: z.string().optional(),
  ENABLE_REGISTRATION: bool(false),
  ENABLE_2FA: bool(true),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).default('Gatehouse <no-reply@gatehouse.local>'),
  MAIL_LEASE_SECONDS: seconds(120, 1, 3600),
  SMS_PROVIDER: z.enum(['log', 'twilio']).default('log'),
  TWILIO_API_BASE: url('https://api.twilio.com'),
  TWILIO_ACCOUNT_SID: z.string().optional(),
  TWILIO_AUTH_TOKEN: z.string().optional(),
  TWILIO_FROM: z.string().optional(),
  DEV_MODE: bool(false),
  METRICS_TOKEN: z.string().min(24, 'at least 24 characters (a random token)').max(512).optional(),
  SSO_ALLOW_INSECURE_ISSUERS: bool(false),
  WEBHOOKS_ALLOW_INSECURE: bool(false),
  WEBHOOKS_LEASE_SECONDS: seconds(60, 1, 3600),
  DNS_SERVERS: z.string().max(2048).optional(),
  TRUST_PROXY: bool(false),
  ACCESS_TOKEN_TTL: seconds(900, 60, 86_400),
  REFRESH_TOKEN_TTL: seconds(604_800, 300, 2_592_000),
  STEP_UP_MAX_AGE: seconds(600, 30, 86_400),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(1024 * 1024),
  // Rate limits: "<count>/<seconds>" sliding windows (our defaults; all configurable).
  RATE_LIMIT_LOGIN: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('10/900'),
  // Addresses that sent a wrong password for one account: from this many on, a distributed guess (docs/operations.md).
  RATE_LIMIT_LOGIN_ACCOUNT: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('5/900'),
  RATE_LIMIT_REGISTER: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('5/3600'),
  RATE_LIMIT_REGISTER_PARTNER: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('3/3600'),
  RATE_LIMIT_FORGOT_PASSWORD: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('5/3600'),
  RATE_LIMIT_MFA_VERIFY: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('10/300'),
  RATE_LIMIT_PASSWORD_RECHECK: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('5/900'),
  RATE_LIMIT_PHONE_VERIFY: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('5/3600'),
  RATE_LIMIT_SMS_SEND: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('3/300'),
  RATE_LIMIT_API: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('600/60'),
  RATE_LIMIT_ENROLL: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('120/60'),
  RATE_LIMIT_API_KEY: z
    .string()
    .regex(/^\d+\/\d+$/)
    .default('600/60'),
  API_KEY_ENVIRONMENT: z
    .string()
    .regex(/^[a-z0-9]{1,16}$/, 'must be 1-16 lower-case letters or digits')
    .optional(),
});

export type RateLimitSpec = { limit: number; windowSeconds: number };

function parseRate(v: string): RateLimitSpec {
  const [limit, windowSeconds] = v.split('/').map(Number) as [number, number];
  return { limit, windowSeconds };
}

type Env = z.infer<typeof envSchema>;

/**
 * Switches that turn a security check off for tests and local experiments. Production refuses each one; any other
 * mode starts with one warning line per switch that is on.
 */
const INSECURE_SWITCHES: { name: keyof Env; on: (e: Env) => boolean; effect: string }[] = [
  {
    name: 'SSO_ALLOW_INSECURE_ISSUERS',
    on: (e) => e.SSO_ALLOW_INSECURE_ISSUERS,
    effect: 'OpenID issuers over http or on private addresses are accepted',
  },
  {
    name: 'WEBHOOKS_ALLOW_INSECURE',
    on: (e) => e.WEBHOOKS_ALLOW_INSECURE,
    effect: 'audit webhooks may post over http and to private addresses',
  },
  {
    name: 'DEV_MODE',
    on: (e) => e.DEV_MODE,
    effect: 'development mode: single sign-on and audit webhooks may reach this machine (loopback), over http too',
  },
  {
    name: 'DATABASE_ROW_SECURITY',
    on: (e) => e.DATABASE_ROW_SECURITY === 'off',
    effect: 'row-level security is off: the database no longer confines a request to its tenant',
  },
];

const reachOf = (insecure: boolean, devMode: boolean): OutboundReach =>
  insecure ? 'any' : devMode ? 'loopback' : 'public';

const PLACEHOLDER = /^(change[-_]?me|changeit|secret|password|placeholder|example|test|dev|x+|0+)$/i;

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }

  /** The refusal as the one line a failed start prints. */
  oneLine(): string {
    return `gatehouse: cannot start: invalid configuration: ${this.problems.join('; ')}`;
  }
}

export function loadConfig(env: Record<string, string | undefined> = process.env) {
  // Empty strings count as unset: `FOO= npm start` should mean the default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  const dnsServers = parseDnsServers(e.DNS_SERVERS, problems);
  if (e.NODE_ENV === 'production') {
    if (!e.ENCRYPTION_KEY) problems.push('ENCRYPTION_KEY: required in production (32 random bytes, base64)');
    else if (PLACEHOLDER.test(e.ENCRYPTION_KEY) || isWeakKey(e.ENCRYPTION_KEY))
      problems.push('ENCRYPTION_KEY: placeholder value refused in production (use 32 random bytes)');
    if (!e.DATABASE_URL) problems.push('DATABASE_URL: production runs on PostgreSQL, not the embedded database');
    if (!e.PUBLIC_URL?.startsWith('https://')) problems.push('PUBLIC_URL: must be https in production');
    // Unset, the console's links follow PUBLIC_URL, which is checked above.
    if (e.APP_URL && !e.APP_URL.startsWith('https://')) problems.push('APP_URL: must be https in production');
    // Without a mail server, invitations and reset links would be dropped (never logged in production).
    if (!e.SMTP_URL) problems.push('SMTP_URL: required in production (invitations, password resets, sign-in notices)');
    for (const sw of INSECURE_SWITCHES)
      if (sw.on(e)) problems.push(`${sw.name}: refused in production (${sw.effect}); unset it`);
    if (dnsServers.some((d) => !isPublicAddress(d.host)))
      problems.push('DNS_SERVERS: loopback and private resolvers are refused in production (they serve tests)');
    if (e.SMS_PROVIDER === 'twilio' && (!e.TWILIO_AUTH_TOKEN || PLACEHOLDER.test(e.TWILIO_AUTH_TOKEN)))
      problems.push('TWILIO_AUTH_TOKEN: required (not a placeholder) when SMS_PROVIDER=twilio');
  }
  if (e.ENCRYPTION_KEY && !isKey(e.ENCRYPTION_KEY))
    problems.push('ENCRYPTION_KEY: must be 32 bytes encoded as base64 (44 chars) or hex (64 chars)');
  for (const k of (e.ENCRYPTION_KEYS_PREVIOUS ?? '').split(',').filter(Boolean)) {
    if (!isKey(k)) problems.push('ENCRYPTION_KEYS_PREVIOUS: each comma-separated key must be 32 bytes (base64 or hex)');
  }
  if (e.SMS_PROVIDER === 'twilio' && (!e.TWILIO_ACCOUNT_SID || !e.TWILIO_AUTH_TOKEN || !e.TWILIO_FROM))
    problems.push('TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM: all required when SMS_PROVIDER=twilio');
  if (problems.length) throw new ConfigError(problems);

  const listener = listenerOrigin(e.HOST, e.PORT);
  const publicUrl = new URL(e.PUBLIC_URL ?? listener);
  // The console is served by the same process, so it lives where the API does unless told otherwise.
  const appUrl = new URL(e.APP_URL ?? e.PUBLIC_URL ?? listener);
  return deepFreeze({
    env: e.NODE_ENV,
    isProduction: e.NODE_ENV === 'production',
    /** One warning per security switch that is on (never in production, which refuses them). */
    insecureSwitches: INSECURE_SWITCHES.filter((sw) => sw.on(e)).map(
      (sw) => `${sw.name}: ${sw.effect} (${e.NODE_ENV} only; production refuses it)`,
    ),
    port: e.PORT,
    host: e.HOST,
    /** The origin links name when PUBLIC_URL/APP_URL are unset: the address the server listens on. */
    listenerOrigin: listener,
    /** Which of the two origins the operator set; the others follow the listener (see withListenPort). */
    explicitUrls: { publicUrl: e.PUBLIC_URL !== undefined, appUrl: e.APP_URL !== undefined },
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    rowSecurity: e.DATABASE_ROW_SECURITY === 'on',
    redisUrl: e.REDIS_URL,
    publicUrl: publicUrl.origin,
    appUrl: appUrl.origin,
    secureCookies: publicUrl.protocol === 'https:',
    encryptionKey: e.ENCRYPTION_KEY,
    previousEncryptionKeys: (e.ENCRYPTION_KEYS_PREVIOUS ?? '').split(',').filter(Boolean),
    enableRegistration: e.ENABLE_REGISTRATION,
    enable2fa: e.ENABLE_2FA,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    mailLeaseSeconds: e.MAIL_LEASE_SECONDS,
    sms: {
      provider: e.SMS_PROVIDER,
      apiBase: e.TWILIO_API_BASE.replace(/\/$/, ''),
      accountSid: e.TWILIO_ACCOUNT_SID,
      authToken: e.TWILIO_AUTH_TOKEN,
      from: e.TWILIO_FROM,
    },
    /** Development mode: SSO and webhooks may reach loopback (shown by /readyz and the console's banner). */
    devMode: e.DEV_MODE,
    /** With it, /metrics answers only a scraper that sends it as a bearer token. */
    metricsToken: e.METRICS_TOKEN,
    ssoAllowInsecureIssuers: e.SSO_ALLOW_INSECURE_ISSUERS,
    /** Where OpenID discovery, SAML metadata and their fetches may go (src/platform/outbound.ts). */
    ssoOutbound: reachOf(e.SSO_ALLOW_INSECURE_ISSUERS, e.DEV_MODE),
    webhooksAllowInsecure: e.WEBHOOKS_ALLOW_INSECURE,
    /** Where audit webhooks may post. */
    webhooksOutbound: reachOf(e.WEBHOOKS_ALLOW_INSECURE, e.DEV_MODE),
    webhooksLeaseSeconds: e.WEBHOOKS_LEASE_SECONDS,
    /** Resolvers of domain proofs, as `setServers` takes them; empty: the system's. */
    dnsServers: dnsServers.map((d) => d.server),
    trustProxy: e.TRUST_PROXY,
    accessTokenTtl: e.ACCESS_TOKEN_TTL,
    refreshTokenTtl: e.REFRESH_TOKEN_TTL,
    stepUpMaxAge: e.STEP_UP_MAX_AGE,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    bodyLimit: e.BODY_LIMIT_BYTES,
    rateLimits: {
      login: parseRate(e.RATE_LIMIT_LOGIN),
      loginAccount: parseRate(e.RATE_LIMIT_LOGIN_ACCOUNT),
      register: parseRate(e.RATE_LIMIT_REGISTER),
      registerPartner: parseRate(e.RATE_LIMIT_REGISTER_PARTNER),
      forgotPassword: parseRate(e.RATE_LIMIT_FORGOT_PASSWORD),
      mfaVerify: parseRate(e.RATE_LIMIT_MFA_VERIFY),
      passwordRecheck: parseRate(e.RATE_LIMIT_PASSWORD_RECHECK),
      phoneVerify: parseRate(e.RATE_LIMIT_PHONE_VERIFY),
      smsSend: parseRate(e.RATE_LIMIT_SMS_SEND),
      api: parseRate(e.RATE_LIMIT_API),
      enroll: parseRate(e.RATE_LIMIT_ENROLL),
      apiKey: parseRate(e.RATE_LIMIT_API_KEY),
    },
    /** The `<environment>` of `gh_<environment>_...` API keys: a key of another environment is refused here. */
    apiKeyEnvironment: e.API_KEY_ENVIRONMENT ?? (e.NODE_ENV === 'production' ? 'live' : 'test'),
  });
}

/**
 * `DNS_SERVERS`: comma-separated `host[:port]` with an IP address as host (`[v6]:port` for IPv6 with a port), as
 * `Resolver.setServers` takes them. A name is refused: resolving the resolver would need a resolver.
 */
function parseDnsServers(v: string | undefined, problems: string[]): { host: string; server: string }[] {
  const out: { host: string; server: string }[] = [];
  for (const raw of (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(raw) ?? /^([0-9.]+)(?::(\d{1,5}))?$/.exec(raw);
    const host = m?.[1] ?? (isIP(raw) === 6 ? raw : undefined);
    const port = m?.[2] === undefined ? undefined : Number(m[2]);
    if (!host || !isIP(host) || (port !== undefined && (port < 1 || port > 65535))) {
      problems.push(`DNS_SERVERS: "${raw}" is not an IP address with an optional port (host:port, [v6]:port)`);
      continue;
    }
    const bracket = isIP(host) === 6 ? `[${host}]` : host;
    out.push({ host, server: port === undefined ? host : `${bracket}:${port}` });
  }
  return out;
}

const isPublicAddress = (host: string) => ipaddr.process(host).range() === 'unicast';

/** Hosts that are only this machine, and wildcard addresses, which a browser cannot open: links say localhost. */
const LOCAL_HOSTS = new Set(['0.0.0.0', '::', '[::]', '127.0.0.1', '::1', '[::1]', 'localhost']);
export const isLoopback = (host: string) => LOCAL_HOSTS.has(host.toLowerCase()) || /^127\./.test(host);

/**
 * The http origin a browser on this machine opens to reach a listener on host:port. Loopback and wildcard hosts
 * become `localhost` (WebAuthn refuses IP addresses as a relying party); other IPv6 addresses are bracketed.
 */
export function listenerOrigin(host: string, port: number): string {
  const name = isLoopback(host) ? 'localhost' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return new URL(`http://${name}:${port}`).origin;
}

/** The 32 key bytes of a hex or base64 key, or null when it is neither. */
function keyBytes(v: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  if (!/^[A-Za-z0-9+/_-]+=*$/.test(v)) return null;
  const bytes = Buffer.from(v, 'base64');
  return bytes.length === 32 ? bytes : null;
}

function isKey(v: string): boolean {
  return keyBytes(v) !== null;
}

/**
 * A key that cannot have come from a random source: all zeros, one repeated byte, a repeated pattern.
 * 32 random bytes have fewer than 16 distinct values with probability ~3e-17, a period of 16 or less ~3e-39.
 */
function isWeakKey(v: string): boolean {
  const b = keyBytes(v);
  if (!b) return false;
  if (new Set(b).size < 16) return true;
  for (let p = 1; p <= b.length / 2; p++) if (b.subarray(p).equals(b.subarray(0, b.length - p))) return true;
  return false;
}

export function deepFreeze<T extends object>(o: T): Readonly<T> {
  for (const v of Object.values(o)) if (v && typeof v === 'object' && !Object.isFrozen(v)) deepFreeze(v);
  return Object.freeze(o);
}

export type Config = ReturnType<typeof loadConfig>;

/** An operator-named variable holding a secret for one CLI call (`--password-env NAME`); read here, the only reader. */
export function readNamedSecret(
  name: string,
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  return env[name] || undefined;
}
