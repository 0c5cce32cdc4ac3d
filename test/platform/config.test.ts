// loadConfig(env): the documented defaults, one named problem per wrong variable, production refusals.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/** The ConfigError thrown for env (fails the test when the env is accepted). */
function refusal(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`configuration was accepted: ${JSON.stringify(env)}`);
}

/** Names of the variables the error complains about, from its problem lines ("NAME: reason"). */
const namedIn = (err: ConfigError) => [...new Set(err.problems.map((p) => p.split(':')[0]))].sort();

const key = () => randomBytes(32).toString('base64');
const PRODUCTION = {
  NODE_ENV: 'production',
  ENCRYPTION_KEY: key(),
  DATABASE_URL: 'postgres://gatehouse:s3cret@db.internal:5432/gatehouse',
  PUBLIC_URL: 'https://id.example.com',
  APP_URL: 'https://console.example.com',
  SMTP_URL: 'smtps://mailer:s3cret@smtp.example.com:465',
};

describe('defaults match the documented ones', () => {
  it('an empty environment gives the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      env: 'development',
      isProduction: false,
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: './data',
      redisUrl: undefined,
      publicUrl: 'http://localhost:3000',
      appUrl: 'http://localhost:3000',
      encryptionKey: undefined,
      enableRegistration: false,
      enable2fa: true,
      smtpUrl: undefined,
      ssoAllowInsecureIssuers: false,
      trustProxy: false,
      accessTokenTtl: 900,
      refreshTokenTtl: 604_800,
      secureCookies: false,
    });
    expect(c.sms.provider).toBe('log');
    expect(c.sms.apiBase).toBe('https://api.twilio.com');
  });

  it('an empty string counts as unset', () => {
    const c = loadConfig({ PORT: '', PUBLIC_URL: '', DATABASE_URL: '', ENABLE_2FA: '' });
    expect(c.port).toBe(3000);
    expect(c.publicUrl).toBe('http://localhost:3000');
    expect(c.databaseUrl).toBeUndefined();
    expect(c.enable2fa).toBe(true);
  });

  it('reads what is given', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/gatehouse',
      DATABASE_URL: 'postgresql://u@h:5432/db',
      REDIS_URL: 'redis://cache:6379',
      PUBLIC_URL: 'https://id.example.com/',
      ENABLE_REGISTRATION: 'true',
      ENABLE_2FA: 'false',
      TRUST_PROXY: '1',
      ACCESS_TOKEN_TTL: '600',
      REFRESH_TOKEN_TTL: '86400',
    });
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: '/var/lib/gatehouse',
      databaseUrl: 'postgresql://u@h:5432/db',
      redisUrl: 'redis://cache:6379',
      publicUrl: 'https://id.example.com',
      secureCookies: true,
      enableRegistration: true,
      enable2fa: false,
      trustProxy: true,
      accessTokenTtl: 600,
      refreshTokenTtl: 86_400,
    });
  });

  it('the result is frozen, nested parts included', () => {
    const c = loadConfig({});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.rateLimits)).toBe(true);
    expect(Object.isFrozen(c.rateLimits.login)).toBe(true);
    expect(Object.isFrozen(c.sms)).toBe(true);
  });
});

describe('each wrong variable stops the start with a message naming it', () => {
  it.each(['abc', '70000', '-1', '3.5', '80abc'])('PORT=%s', (value) => {
    const err = refusal({ PORT: value });
    expect(namedIn(err)).toEqual(['PORT']);
    expect(err.message).toMatch(/^\s+- PORT: /m);
  });

  it.each(['not a url', 'localhost:3000', 'ftp://id.example.com', 'http://', 'javascript:alert(1)'])(
    'PUBLIC_URL=%s',
    (value) => {
      const err = refusal({ PUBLIC_URL: value });
      expect(namedIn(err)).toEqual(['PUBLIC_URL']);
      expect(err.message).toContain('PUBLIC_URL: ');
    },
  );

  it.each(['mysql://u@h/db', 'localhost:5432/gatehouse', 'http://db.internal/gatehouse'])(
    'DATABASE_URL=%s',
    (value) => {
      const err = refusal({ DATABASE_URL: value });
      expect(namedIn(err)).toEqual(['DATABASE_URL']);
      expect(err.message).toContain('DATABASE_URL: ');
    },
  );

  it.each([
    ['16 bytes, base64', randomBytes(16).toString('base64')],
    ['31 bytes, base64', randomBytes(31).toString('base64')],
    ['33 bytes, base64', randomBytes(33).toString('base64')],
    ['31 bytes, hex', randomBytes(31).toString('hex')],
    ['33 bytes, hex', randomBytes(33).toString('hex')],
    ['not an encoding', 'this is not a key at all, not even close!!!'],
  ])('ENCRYPTION_KEY of the wrong length (%s)', (_what, value) => {
    const err = refusal({ ENCRYPTION_KEY: value });
    expect(namedIn(err)).toEqual(['ENCRYPTION_KEY']);
    expect(err.message).toMatch(/ENCRYPTION_KEY: .*32 bytes/);
  });

  it('a 32-byte key is accepted as base64 (padded or not) and as hex', () => {
    const raw = randomBytes(32);
    for (const v of [raw.toString('base64'), raw.toString('base64').replace(/=+$/, ''), raw.toString('hex')]) {
      expect(loadConfig({ ENCRYPTION_KEY: v }).encryptionKey).toBe(v);
    }
  });

  it('several wrong variables are all named at once', () => {
    const err = refusal({ PORT: 'abc', PUBLIC_URL: 'nope', ACCESS_TOKEN_TTL: '5', ENABLE_2FA: 'maybe' });
    expect(namedIn(err)).toEqual(['ACCESS_TOKEN_TTL', 'ENABLE_2FA', 'PORT', 'PUBLIC_URL']);
  });
});

describe('production refuses what is only fit for development', () => {
  it('a good production configuration passes', () => {
    const c = loadConfig(PRODUCTION);
    expect(c.isProduction).toBe(true);
    expect(c.secureCookies).toBe(true);
    expect(c.publicUrl).toBe('https://id.example.com');
  });

  it('NODE_ENV=production alone names the key, the database, the public URL and the mail server', () => {
    const err = refusal({ NODE_ENV: 'production' });
    expect(namedIn(err)).toEqual(['DATABASE_URL', 'ENCRYPTION_KEY', 'PUBLIC_URL', 'SMTP_URL']);
    expect(err.message).toMatch(/ENCRYPTION_KEY: required in production/);
  });

  it('a missing ENCRYPTION_KEY', () => {
    const err = refusal({ ...PRODUCTION, ENCRYPTION_KEY: undefined });
    expect(namedIn(err)).toEqual(['ENCRYPTION_KEY']);
    expect(err.message).toMatch(/ENCRYPTION_KEY: required/);
  });

  it.each([
    ['changeme', 'changeme'],
    ['all-zero hex', '0'.repeat(64)],
    ['all-zero base64', Buffer.alloc(32).toString('base64')],
    ['one repeated byte', Buffer.alloc(32, 0x41).toString('base64')],
    ['a short repeated pattern', Buffer.from('0123456789abcdef'.repeat(2)).toString('base64')],
  ])('a placeholder ENCRYPTION_KEY (%s)', (_what, value) => {
    const err = refusal({ ...PRODUCTION, ENCRYPTION_KEY: value });
    expect(namedIn(err)).toEqual(['ENCRYPTION_KEY']);
    expect(err.message).toMatch(/ENCRYPTION_KEY: placeholder/);
  });

  it('a missing DATABASE_URL (the embedded database is for development)', () => {
    const err = refusal({ ...PRODUCTION, DATABASE_URL: undefined });
    expect(namedIn(err)).toEqual(['DATABASE_URL']);
  });

  it('an http PUBLIC_URL', () => {
    const err = refusal({ ...PRODUCTION, PUBLIC_URL: 'http://id.example.com' });
    expect(namedIn(err)).toEqual(['PUBLIC_URL']);
    expect(err.message).toMatch(/PUBLIC_URL: must be https/);
  });

  it('insecure SSO issuers and a placeholder Twilio token', () => {
    expect(namedIn(refusal({ ...PRODUCTION, SSO_ALLOW_INSECURE_ISSUERS: 'true' }))).toEqual([
      'SSO_ALLOW_INSECURE_ISSUERS',
    ]);
    const twilio = { SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: 'AC123', TWILIO_FROM: '+15550100' };
    expect(namedIn(refusal({ ...PRODUCTION, ...twilio, TWILIO_AUTH_TOKEN: 'changeme' }))).toEqual([
      'TWILIO_AUTH_TOKEN',
    ]);
    expect(
      loadConfig({ ...PRODUCTION, ...twilio, TWILIO_AUTH_TOKEN: randomBytes(16).toString('hex') }).sms.provider,
    ).toBe('twilio');
  });

  it('a missing SMTP_URL (mail would be dropped) and an http APP_URL', () => {
    expect(namedIn(refusal({ ...PRODUCTION, SMTP_URL: undefined }))).toEqual(['SMTP_URL']);
    expect(namedIn(refusal({ ...PRODUCTION, APP_URL: 'http://console.example.com' }))).toEqual(['APP_URL']);
    // Unset, the console's origin is PUBLIC_URL's, which is https.
    expect(loadConfig({ ...PRODUCTION, APP_URL: undefined }).appUrl).toBe('https://id.example.com');
  });

  it.each([
    ['SSO_ALLOW_INSECURE_ISSUERS', 'true'],
    ['WEBHOOKS_ALLOW_INSECURE', 'true'],
    ['DATABASE_ROW_SECURITY', 'off'],
  ])('the security switch %s is refused, in one line naming it', (name, value) => {
    const err = refusal({ ...PRODUCTION, [name]: value });
    expect(namedIn(err)).toEqual([name]);
    expect(err.oneLine()).toMatch(new RegExp(`^gatehouse: cannot start: invalid configuration: ${name}: refused`));
    expect(err.oneLine()).not.toContain('\n');
  });

  it('DNS_SERVERS: the test resolvers (loopback, private) are refused in production; public ones pass', () => {
    for (const servers of ['127.0.0.1:5353', '10.0.0.53', '[::1]:53', '192.168.1.1,8.8.8.8'])
      expect(namedIn(refusal({ ...PRODUCTION, DNS_SERVERS: servers })), servers).toEqual(['DNS_SERVERS']);
    expect(loadConfig({ ...PRODUCTION, DNS_SERVERS: '1.1.1.1, [2606:4700:4700::1111]:53' }).dnsServers).toEqual([
      '1.1.1.1',
      '[2606:4700:4700::1111]:53',
    ]);
    expect(loadConfig({ DNS_SERVERS: '127.0.0.1:5353' }).dnsServers).toEqual(['127.0.0.1:5353']);
    expect(loadConfig({}).dnsServers).toEqual([]);
  });

  it('DNS_SERVERS: a name or a bad port is refused anywhere', () => {
    for (const servers of ['dns.example.com', '127.0.0.1:99999', '1.2.3.4:', 'x'])
      expect(namedIn(refusal({ DNS_SERVERS: servers })), servers).toEqual(['DNS_SERVERS']);
  });

  it('the same placeholder values are allowed in development', () => {
    expect(loadConfig({ ENCRYPTION_KEY: Buffer.alloc(32).toString('base64') }).env).toBe('development');
    expect(loadConfig({ PUBLIC_URL: 'http://localhost:8080' }).publicUrl).toBe('http://localhost:8080');
  });
});

describe('outside production, each security switch that is on is one warning', () => {
  it('none by default; one per switch, naming it and the mode', () => {
    expect(loadConfig({}).insecureSwitches).toEqual([]);
    const c = loadConfig({
      SSO_ALLOW_INSECURE_ISSUERS: 'true',
      WEBHOOKS_ALLOW_INSECURE: 'true',
      DATABASE_ROW_SECURITY: 'off',
    });
    expect(c.insecureSwitches).toHaveLength(3);
    expect(c.insecureSwitches.map((w) => w.split(':')[0])).toEqual([
      'SSO_ALLOW_INSECURE_ISSUERS',
      'WEBHOOKS_ALLOW_INSECURE',
      'DATABASE_ROW_SECURITY',
    ]);
    expect(c.insecureSwitches.every((w) => w.includes('(development only; production refuses it)'))).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test', WEBHOOKS_ALLOW_INSECURE: 'true' }).insecureSwitches[0]).toContain(
      '(test only',
    );
  });
});
