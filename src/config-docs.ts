// What each environment variable means, for the README table (`npm run docs:env`). Keyed by the config schema: a
// variable added to src/config.ts without a line here does not type-check, and a stale README fails a test.
import { envSchema } from './config.js';

type EnvName = keyof typeof envSchema.shape;

export const ENV_DOCS: Record<EnvName, string> = {
  NODE_ENV:
    '`development` (the default, also under `npm start`: mail and SMS codes written to the log, `gh_test_` API keys), `test`, or `production`: refuses generated keys, placeholder secrets, the embedded database, http `PUBLIC_URL`/`APP_URL`, a missing `SMTP_URL` and the security switches; the ready line names the mode',
  PORT: 'listen port; links follow it unless `PUBLIC_URL`/`APP_URL` are set',
  HOST: 'listen address (`0.0.0.0` to accept other machines)',
  DATABASE_URL: 'PostgreSQL (`postgres://`); unset = embedded PGlite in `DATA_DIR`',
  DATA_DIR: 'embedded database and, in development, the generated encryption key',
  DATABASE_ROW_SECURITY:
    "`on`: every statement runs as the role `gatehouse_app` under row-level security keyed on the caller's tenant; `off` (warned at start, refused in production) only to measure its cost",
  REDIS_URL: 'shared rate limits and short-lived state for several instances; unset = the database',
  PUBLIC_URL:
    'public origin of the API: links, cookies, WebAuthn RP id, SSO redirect URI; unset = the listener, `http://localhost:<PORT>` (or `http://<HOST>:<PORT>` for a non-local `HOST`)',
  APP_URL: 'origin of the admin console: setup, reset and invitation links; unset = `PUBLIC_URL`',
  ENCRYPTION_KEY:
    'AES-256-GCM key for secrets at rest (32 bytes, base64 or hex); generated into `DATA_DIR` in development, required in production',
  ENCRYPTION_KEYS_PREVIOUS: 'comma-separated older keys, still accepted for reading (key rotation)',
  ENABLE_REGISTRATION: 'open self-service registration (`/auth/register`, `/auth/register-partner`)',
  ENABLE_2FA: 'second factors (TOTP, SMS, passkeys)',
  SMTP_URL:
    'mail server (`smtp://` or `smtps://`); required in production; unset = mails written to the log in development',
  MAIL_FROM: 'sender of every mail',
  MAIL_LEASE_SECONDS:
    'how long one instance holds a mail it is sending before another instance may retry it (the outbox survives a crash)',
  SMS_PROVIDER: '`log` (development: the text is written to the log) or `twilio`',
  TWILIO_API_BASE: 'base URL of a Twilio-compatible Messages API',
  TWILIO_ACCOUNT_SID: 'Twilio account (with `SMS_PROVIDER=twilio`)',
  TWILIO_AUTH_TOKEN: 'Twilio token (with `SMS_PROVIDER=twilio`)',
  TWILIO_FROM: 'sending number (with `SMS_PROVIDER=twilio`)',
  METRICS_TOKEN:
    '`/metrics` answers only `Authorization: Bearer <METRICS_TOKEN>` (at least 24 characters; else 401); unset = `/metrics` is open like the probes, so bind it to a private network or filter it at the proxy',
  DEV_MODE:
    'development mode, to try single sign-on and audit webhooks on one machine: OpenID issuers, SAML metadata and webhook URLs on loopback (`localhost`, `127.0.0.1`, over http too) are accepted; other private addresses stay refused. Shown at start, in `/readyz` and as a console banner; refused in production. See "Trying integrations locally"',
  SSO_ALLOW_INSECURE_ISSUERS:
    'allow http and private-address OpenID issuers (tests only; warned at start, refused in production)',
  WEBHOOKS_ALLOW_INSECURE:
    'allow http and private-address audit webhook URLs (tests only; warned at start, refused in production)',
  DNS_SERVERS:
    "resolvers of domain proofs (TXT records): comma-separated `host:port` IP addresses; default: the system's. Loopback and private addresses are refused in production",
  WEBHOOKS_LEASE_SECONDS:
    'how long one instance holds a webhook delivery it is sending before another may retry it; keep it above the 10 s send timeout',
  TRUST_PROXY: 'take the client address from `X-Forwarded-For` (behind a reverse proxy)',
  ACCESS_TOKEN_TTL: 'access-token lifetime, seconds',
  REFRESH_TOKEN_TTL: 'refresh-token lifetime (sliding), seconds',
  STEP_UP_MAX_AGE: 'how recent a proof of presence must be for sensitive actions, seconds',
  LOG_LEVEL: 'pino level',
  LOG_FORMAT: '`json` (one object per line) or `pretty` (development; needs the dev dependency pino-pretty)',
  BODY_LIMIT_BYTES: 'largest request body',
  RATE_LIMIT_LOGIN: 'sign-in attempts per address and e-mail (`count/seconds`)',
  RATE_LIMIT_LOGIN_ACCOUNT:
    'addresses sending a wrong password for one account before it is treated as a distributed guess',
  RATE_LIMIT_REGISTER: 'registrations per address and per e-mail (valid, strong attempts only)',
  RATE_LIMIT_REGISTER_PARTNER: 'partner registrations and setup attempts per address and per e-mail',
  RATE_LIMIT_FORGOT_PASSWORD: 'reset-link requests per address',
  RATE_LIMIT_MFA_VERIFY: 'second-factor attempts',
  RATE_LIMIT_PASSWORD_RECHECK: 'current-password checks per user (change password, sensitive actions)',
  RATE_LIMIT_PHONE_VERIFY: 'phone verification codes sent',
  RATE_LIMIT_SMS_SEND: 'sign-in SMS codes sent',
  RATE_LIMIT_API: 'authenticated API requests per user',
  RATE_LIMIT_ENROLL: 'agent enrolments per address',
  RATE_LIMIT_API_KEY: 'requests per API key (a key, or an access token obtained with it by `client_credentials`)',
  API_KEY_ENVIRONMENT:
    'the `<environment>` part of new API keys (`gh_<environment>_...`); unset = `live` in production, `test` otherwise. Keys of another environment are refused',
};

const shown = (v: unknown) => (v === undefined ? 'unset' : `\`${String(v)}\``);

/** The README table: every variable of the schema, its default (as parsed from an empty environment) and meaning. */
export function envTable(): string {
  const defaults = envSchema.parse({}) as Record<string, unknown>;
  const rows = (Object.keys(envSchema.shape) as EnvName[]).map(
    (name) => `| \`${name}\` | ${shown(defaults[name])} | ${ENV_DOCS[name]} |`,
  );
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

export const ENV_TABLE_START = '<!-- env-table:start (npm run docs:env) -->';
export const ENV_TABLE_END = '<!-- env-table:end -->';

/** README text with the table between the markers replaced by the current one. */
export function withEnvTable(readme: string): string {
  const a = readme.indexOf(ENV_TABLE_START);
  const b = readme.indexOf(ENV_TABLE_END);
  if (a < 0 || b < a) throw new Error(`README.md lacks the markers ${ENV_TABLE_START} ... ${ENV_TABLE_END}`);
  return `${readme.slice(0, a + ENV_TABLE_START.length)}\n${envTable()}\n${readme.slice(b)}`;
}
