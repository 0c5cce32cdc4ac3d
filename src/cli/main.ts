#!/usr/bin/env node
// `npx gatehouse <command>`: operator commands over the same services as the API. `--help` on each; `--json` for
// scripts. Exit codes: 0 done, 1 refused or found a problem, 2 the database could not be used, 64 usage, 78 config.
import { Command, CommanderError, Option } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import { type Config, readNamedSecret } from '../config.js';
import type { Database } from '../db/connect.js';
import type { Result } from './commands.js';
import { cliActor, config, EXIT, fail, output, readStdinLine, withDatabase } from './runtime.js';

const program = new Command('gatehouse')
  .version(pkg.version, '-V, --version', 'print the version of Gatehouse')
  .description(
    'Gatehouse operator commands. Run beside the same environment as the server (DATABASE_URL or DATA_DIR, ENCRYPTION_KEY).',
  )
  .showHelpAfterError()
  .exitOverride();

const json = () => new Option('--json', 'print the result as JSON on stdout (progress stays on stderr)');
const commands = () => import('./commands.js');

type Runner = (cfg: Config, database: Database) => Promise<Result>;

/** Runs a database command: config, database (refused beside a server on the same PGlite directory), output. */
async function run(opts: { json?: boolean }, work: Runner): Promise<void> {
  const cfg = config();
  const result = await withDatabase(cfg, (database) => work(cfg, database));
  output(opts, result.data, result.lines);
  process.exitCode = result.exitCode ?? EXIT.ok;
}

async function password(opts: { passwordStdin?: boolean; passwordEnv?: string }): Promise<string | undefined> {
  if (opts.passwordStdin) return readStdinLine();
  if (opts.passwordEnv) {
    const value = readNamedSecret(opts.passwordEnv);
    if (!value)
      throw new (await import('./runtime.js')).CliError(
        `--password-env: ${opts.passwordEnv} is not set`,
        EXIT.usage,
        'usage',
      );
    return value;
  }
  return undefined;
}

program
  .command('setup')
  .description('Create the first partner and its administrator (refused once a partner exists). Non-interactive.')
  .requiredOption('--company <name>', 'partner (company) name')
  .requiredOption('--email <email>', "administrator's e-mail")
  .requiredOption('--name <name>', "administrator's name")
  .option('--password-stdin', 'read the password from standard input')
  .option('--password-env <VAR>', 'read the password from this environment variable')
  .addOption(json())
  .action(async (opts) => {
    const pw = await password(opts);
    if (pw === undefined)
      throw new (await import('./runtime.js')).CliError(
        'give the password with --password-stdin or --password-env VAR (never on the command line).',
        EXIT.usage,
        'usage',
      );
    await run(opts, async (cfg, db) =>
      (await commands()).setupCommand(cfg, db, cliActor(), {
        company: opts.company,
        email: opts.email,
        name: opts.name,
        password: pw,
      }),
    );
  });

const users = program.command('users').description('Act on a user account when nobody can do it from the console');
users
  .command('reset-password')
  .description(
    'Set a new password (--password-stdin / --password-env) or print a single-use reset link; ends every session',
  )
  .requiredOption('--email <email>', "the user's e-mail")
  .option('--password-stdin', 'read the new password from standard input')
  .option('--password-env <VAR>', 'read the new password from this environment variable')
  .addOption(json())
  .action(async (opts) => {
    const pw = await password(opts);
    await run(opts, async (cfg, db) => (await commands()).resetPasswordCommand(cfg, db, cliActor(), opts.email, pw));
  });
users
  .command('reset-mfa')
  .description('Clear every second factor (TOTP, SMS, passkeys, recovery codes) and end every session')
  .requiredOption('--email <email>', "the user's e-mail")
  .addOption(json())
  .action((opts) => run(opts, async (cfg, db) => (await commands()).resetMfaCommand(cfg, db, cliActor(), opts.email)));
users
  .command('disable')
  .description("Disable the account and end its sessions (a partner's last administrator is kept)")
  .requiredOption('--email <email>', "the user's e-mail")
  .addOption(json())
  .action((opts) => run(opts, async (cfg, db) => (await commands()).disableCommand(cfg, db, cliActor(), opts.email)));

const keys = program.command('keys').description('Rotate the token signing key or the encryption key');
keys
  .command('rotate-signing')
  .description('Make a new active signing key; the old one stays in the JWKS until the tokens it signed expire')
  .addOption(json())
  .action((opts) => run(opts, async (cfg, db) => (await commands()).rotateSigningCommand(cfg, db, cliActor())));
keys
  .command('rotate-encryption')
  .description(
    'Re-seal every sealed value under ENCRYPTION_KEY (old keys in ENCRYPTION_KEYS_PREVIOUS); resumable, shows progress',
  )
  .addOption(json())
  .action((opts) => run(opts, async (cfg, db) => (await commands()).rotateEncryptionCommand(cfg, db, cliActor())));

const audit = program.command('audit').description('The tamper-evident audit trail');
audit
  .command('verify')
  .description('Recompute every hash chain (one per partner and the global one); exit 1 if one is broken')
  .addOption(json())
  .action((opts) => run(opts, async (cfg, db) => (await commands()).auditVerifyCommand(cfg, db, cliActor())));
audit
  .command('export')
  .description("Export a partner's audit records (newest first) as JSON lines or CSV")
  .requiredOption('--partner <id>', 'partner id')
  .addOption(new Option('--format <format>', 'output format').choices(['jsonl', 'csv']).default('jsonl'))
  .option('--output <file>', 'write to this file (default: standard output)')
  .option('--from <iso>', 'records at or after this time (ISO-8601)')
  .option('--to <iso>', 'records at or before this time (ISO-8601)')
  .option('--action <action>', 'only this action')
  .addOption(json())
  .action((opts) => run(opts, async (cfg, db) => (await commands()).auditExportCommand(cfg, db, cliActor(), opts)));

program
  .command('db')
  .description('Database')
  .command('migrate')
  .description('Apply the pending migrations (the server also does at start)')
  .addOption(json())
  .action((opts) => run(opts, async (_cfg, db) => (await commands()).migrateCommand(db, cliActor())));

program
  .command('config')
  .description('Configuration')
  .command('check')
  .description('Validate the environment and print the effective configuration, secrets masked')
  .addOption(json())
  .action(async (opts) => {
    const result = (await commands()).configCheckCommand(config());
    output(opts, result.data, result.lines);
  });

program
  .command('dev-idp')
  .description(
    'Development: a local OpenID Provider with one user, to try single sign-on end to end (start the server with DEV_MODE=true)',
  )
  .option('--port <port>', 'listen port on 127.0.0.1 (0 = any free port)', '4010')
  .option('--email <email>', 'the e-mail of the one user every sign-in completes as', 'ada@example.com')
  .option('--name <name>', "the user's name", 'Ada Lovelace')
  .option('--redirect-uri <url>', "Gatehouse's SSO callback (default: PUBLIC_URL/api/v1/sso/callback)")
  .addOption(json())
  .action(async (opts) => {
    const cfg = config();
    const { CliError } = await import('./runtime.js');
    if (cfg.isProduction)
      throw new CliError('dev-idp is a development tool: refused in production.', EXIT.usage, 'usage');
    const port = Number(opts.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CliError('--port: a port number (0-65535)', EXIT.usage, 'usage');
    const { startDevIdp } = await import('./dev-idp.js');
    const idp = await startDevIdp({
      port,
      email: opts.email,
      name: opts.name,
      redirectUri: opts.redirectUri ?? `${cfg.publicUrl}/api/v1/sso/callback`,
    });
    output(opts, { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, email: opts.email }, [
      `dev-idp: OpenID Provider at ${idp.issuer} (Ctrl-C to stop)`,
      `  issuer         ${idp.issuer}`,
      `  client id      ${idp.clientId}`,
      `  client secret  ${idp.clientSecret}`,
      `  user           ${opts.name} <${opts.email}> (every sign-in completes as this user)`,
      'In the console (server started with DEV_MODE=true): Single sign-on > add an OpenID Connect provider with these',
      'values, activate it, then sign in with single sign-on.',
    ]);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await idp.close();
  });

const wantsJson = process.argv.includes('--json');
/** Exits once stdout has taken everything written (a piped export must not be cut short). */
const exit = (code: number) => process.stdout.write('', () => process.exit(code));
program.parseAsync(process.argv).then(
  () => exit(Number(process.exitCode ?? 0)),
  (err: unknown) => {
    if (err instanceof CommanderError) return exit(err.exitCode === 0 ? 0 : EXIT.usage);
    exit(fail(err, wantsJson));
  },
);
