// The operator commands, over the same services as the HTTP API. Each returns its result; main.ts prints it.
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import type { Config } from '../config.js';
import { listenerMismatches } from '../config-listener.js';
import type { Database, Db } from '../db/connect.js';
import { appliedMigrationCount } from '../db/migration-count.js';
import { encryptionKey } from '../deps.js';
import { exportStream } from '../modules/audit/export.js';
import { verifyAllChains } from '../modules/audit/verify.js';
import { AuditWriter, type AuditActor } from '../modules/audit/writer.js';
import { KeyRing } from '../modules/auth/keys.js';
import { resealAll } from '../db/sealed-values.js';
import { createPartnerWithAdmin, refusingDuplicateEmail } from '../modules/auth/registration-service.js';
import { registerPartnerBody } from '../modules/auth/schemas.js';
import { assertStrongPassword, hashPassword } from '../modules/identity/index.js';
import { assertSetupOpen } from '../modules/setup/index.js';
import { operatorDisable, operatorResetMfa, operatorResetPassword } from '../modules/users/operator.js';
import { systemClock } from '../platform/clock.js';
import { parseKey, SecretBox } from '../platform/secret-box.js';
import { safeTarget } from '../platform/start-failure.js';
import { CliError, EXIT, progress, progressDone } from './runtime.js';

export interface Result {
  data: Record<string, unknown>;
  lines: string[];
  exitCode?: number;
}

const quietLogger = { warn: (o: unknown, msg?: string) => process.stderr.write(`${msg ?? ''} ${JSON.stringify(o)}\n`) };

function operatorDeps(config: Config, database: Database) {
  const box = new SecretBox(encryptionKey(config, quietLogger), config.previousEncryptionKeys.map(parseKey));
  return { config, db: database.db, clock: systemClock, audit: new AuditWriter(systemClock), box };
}

const record = (
  db: Db,
  audit: AuditWriter,
  actor: AuditActor,
  action: string,
  details: Record<string, unknown>,
  partnerId: string | null = null,
) => db.transaction((tx) => audit.record(tx, { action, actor, partnerId, resourceType: 'system', details }, null));

export async function setupCommand(
  config: Config,
  database: Database,
  actor: AuditActor,
  input: { company: string; email: string; name: string; password: string },
): Promise<Result> {
  await database.migrate();
  const parsed = registerPartnerBody.safeParse({
    companyName: input.company,
    email: input.email,
    name: input.name,
    password: input.password,
  });
  if (!parsed.success)
    throw new CliError(
      `invalid input: ${z.prettifyError(parsed.error).replace(/\n/g, ' ')}`,
      EXIT.usage,
      'validation_failed',
    );
  const body = parsed.data;
  await assertStrongPassword(body.password, body);
  const passwordHash = await hashPassword(body.password);
  const deps = operatorDeps(config, database);
  const { partner, user } = await refusingDuplicateEmail(() =>
    deps.db.transaction(async (tx) => {
      await assertSetupOpen(tx);
      return createPartnerWithAdmin(
        deps,
        tx,
        { companyName: body.companyName, email: body.email, name: body.name, passwordHash },
        { via: 'cli', meta: null, actor },
      );
    }),
  );
  const signIn = `${config.appUrl}/login`;
  return {
    data: { ok: true, partner, admin: { id: user.id, email: user.email, name: user.name }, signInUrl: signIn },
    lines: [
      `Created partner "${partner.name}" (${partner.slug}, ${partner.id})`,
      `Administrator ${user.email} can sign in at ${signIn}`,
    ],
  };
}

export async function resetPasswordCommand(
  config: Config,
  database: Database,
  actor: AuditActor,
  email: string,
  password?: string,
): Promise<Result> {
  const r = await operatorResetPassword(operatorDeps(config, database), actor, email, password);
  const lines = r.passwordSet
    ? [`Password of ${r.email} set; ${r.sessionsRevoked} session(s) ended.`]
    : [
        `Reset link for ${r.email} (single use, valid ${Math.round((r.expiresInSeconds ?? 0) / 60)} minutes):`,
        String(r.resetUrl),
      ];
  return { data: { ok: true, ...r }, lines };
}

export async function resetMfaCommand(
  config: Config,
  database: Database,
  actor: AuditActor,
  email: string,
): Promise<Result> {
  const r = await operatorResetMfa(operatorDeps(config, database), actor, email);
  return {
    data: { ok: true, ...r },
    lines: [`Second factors of ${r.email} cleared; ${r.sessionsRevoked} session(s) ended.`],
  };
}

export async function disableCommand(
  config: Config,
  database: Database,
  actor: AuditActor,
  email: string,
): Promise<Result> {
  const r = await operatorDisable(operatorDeps(config, database), actor, email);
  return { data: { ok: true, ...r }, lines: [`${r.email} disabled; ${r.sessionsRevoked} session(s) ended.`] };
}

export async function rotateSigningCommand(config: Config, database: Database, actor: AuditActor): Promise<Result> {
  await database.migrate();
  const deps = operatorDeps(config, database);
  const graceMs = config.accessTokenTtl * 1000 + 120_000;
  const ring = new KeyRing(database.db, deps.box, graceMs);
  const now = deps.clock.now();
  const r = await deps.db.transaction(async (tx) => {
    const rotated = await ring.rotate(tx, now);
    await deps.audit.record(
      tx,
      {
        action: 'keys.signing.rotate',
        actor,
        resourceType: 'signing_key',
        resourceId: rotated.kid,
        details: { retiredKid: rotated.retiredKid },
      },
      null,
    );
    return rotated;
  });
  const publishedUntil = new Date(now.getTime() + graceMs).toISOString();
  return {
    data: { ok: true, kid: r.kid, retiredKid: r.retiredKid, retiredKeyPublishedUntil: publishedUntil },
    lines: [
      `New signing key ${r.kid} is active; running servers sign with it within a minute.`,
      r.retiredKid
        ? `Key ${r.retiredKid} is retired and stays in the JWKS until ${publishedUntil} (tokens it signed expire before).`
        : 'There was no previous key.',
    ],
  };
}

export async function rotateEncryptionCommand(config: Config, database: Database, actor: AuditActor): Promise<Result> {
  if (!config.previousEncryptionKeys.length)
    throw new CliError(
      'set ENCRYPTION_KEY to the new key and ENCRYPTION_KEYS_PREVIOUS to the old one(s), then run this again (the servers need both meanwhile).',
      EXIT.usage,
      'usage',
    );
  await database.migrate();
  const deps = operatorDeps(config, database);
  const report = await resealAll(deps.db, deps.box, (p) =>
    progress(`re-sealing ${p.label}: ${p.done}/${p.total}${p.failed ? ` (${p.failed} failed)` : ''}`),
  );
  progressDone();
  const resealed = report.reduce((n, p) => n + p.done, 0);
  const failed = report.reduce((n, p) => n + p.failed, 0);
  await record(deps.db, deps.audit, actor, 'keys.encryption.rotate', {
    keyId: deps.box.currentKeyId,
    resealed,
    failed,
  });
  return {
    data: { ok: failed === 0, keyId: deps.box.currentKeyId, resealed, failed, locations: report },
    lines: [
      ...report.map(
        (p) =>
          `${p.label}: ${p.done} re-sealed${p.failed ? `, ${p.failed} could not be opened with any configured key` : ''}`,
      ),
      failed
        ? `${failed} value(s) left sealed under an unknown key; add that key to ENCRYPTION_KEYS_PREVIOUS and run again.`
        : `Every sealed value is under key ${deps.box.currentKeyId}; ENCRYPTION_KEYS_PREVIOUS may now be removed (restart the servers).`,
    ],
    exitCode: failed ? EXIT.failed : EXIT.ok,
  };
}

export async function auditVerifyCommand(config: Config, database: Database, actor: AuditActor): Promise<Result> {
  const reports = await verifyAllChains(database.db);
  progress(`verified ${reports.length} chain(s)`);
  progressDone();
  const broken = reports.filter((r) => !r.ok);
  const total = reports.reduce((n, r) => n + r.checked, 0);
  await record(database.db, operatorDeps(config, database).audit, actor, 'audit.verify', {
    chains: reports.length,
    broken: broken.length,
    checked: total,
  });
  return {
    data: { ok: broken.length === 0, checked: total, chains: reports },
    lines: [
      ...reports.map((r) => {
        const chain = r.partnerId ? `partner ${r.partnerId}` : 'global';
        return r.ok
          ? `ok      ${chain}: ${r.checked} records`
          : `BROKEN  ${chain}: ${r.checked} records, first broken record ${r.firstBrokenId}`;
      }),
      broken.length
        ? `${broken.length} of ${reports.length} chains broken (${total} records checked)`
        : `all ${reports.length} chains intact (${total} records checked)`,
    ],
    exitCode: broken.length ? EXIT.failed : EXIT.ok,
  };
}

export async function auditExportCommand(
  config: Config,
  database: Database,
  actor: AuditActor,
  opts: { partner: string; format: 'csv' | 'jsonl'; output?: string; from?: string; to?: string; action?: string },
): Promise<Result> {
  const deps = operatorDeps(config, database);
  const filters = { from: opts.from, to: opts.to, action: opts.action };
  await record(
    deps.db,
    deps.audit,
    actor,
    'audit.export',
    { format: opts.format, filters: Object.fromEntries(Object.entries(filters).filter(([, v]) => v)) },
    opts.partner,
  );
  const stream = exportStream(
    deps.db,
    { kind: 'partner', partnerId: opts.partner, orgIds: 'all' },
    filters as never,
    opts.format,
  );
  let bytes = 0;
  let lastReport = 0;
  stream.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (opts.output && Date.now() - lastReport > 500) {
      lastReport = Date.now();
      progress(`exported ${(bytes / 1024).toFixed(0)} KiB`);
    }
  });
  if (!opts.output) {
    await pipeline(stream, process.stdout, { end: false });
    return { data: {}, lines: [] };
  }
  await pipeline(stream, createWriteStream(opts.output));
  progressDone();
  return { data: { ok: true, output: opts.output, bytes }, lines: [`Wrote ${bytes} bytes to ${opts.output}`] };
}

export async function migrateCommand(database: Database, actor: AuditActor): Promise<Result> {
  const applied = () => appliedMigrationCount(database.db);
  const before = await applied();
  progress('applying migrations...');
  await database.migrate();
  const after = await applied();
  progressDone();
  await database.db.transaction((tx) =>
    new AuditWriter(systemClock).record(
      tx,
      { action: 'db.migrate', actor, resourceType: 'system', details: { before, after } },
      null,
    ),
  );
  return {
    data: { ok: true, applied: after - before, total: after },
    lines: [
      after > before ? `Applied ${after - before} migration(s); ${after} in all.` : `Up to date (${after} migrations).`,
    ],
  };
}

const mask = (v: string | undefined | null) => (v ? '********' : null);

export function configCheckCommand(config: Config): Result {
  const shown = {
    ...config,
    databaseUrl: config.databaseUrl ? safeTarget(config.databaseUrl) : null,
    redisUrl: config.redisUrl ? safeTarget(config.redisUrl) : null,
    smtpUrl: config.smtpUrl ? safeTarget(config.smtpUrl) : null,
    encryptionKey: config.encryptionKey
      ? mask(config.encryptionKey)
      : `(generated into ${config.dataDir}/encryption.key)`,
    previousEncryptionKeys: config.previousEncryptionKeys.map(() => '********'),
    sms: { ...config.sms, authToken: mask(config.sms.authToken) },
  };
  const warnings = listenerMismatches(config);
  const lines = [
    'Configuration is valid. Effective values (secrets masked):',
    ...flatten(shown).map(([k, v]) => `  ${k} = ${JSON.stringify(v)}`),
    ...warnings.map((w) => `warning: ${w}`),
  ];
  return { data: { ok: true, config: shown, warnings }, lines };
}

function flatten(o: object, prefix = ''): [string, unknown][] {
  return Object.entries(o).flatMap(([k, v]) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? flatten(v, `${prefix}${k}.`)
      : [[`${prefix}${k}`, v] as [string, unknown]],
  );
}
