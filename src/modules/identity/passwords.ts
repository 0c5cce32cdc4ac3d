// Passwords: argon2id off the event loop (worker threads at a lower priority, argon2-pool.ts), strength by zxcvbn.
import { availableParallelism } from 'node:os';
import type { Algorithm } from '@node-rs/argon2';
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { z } from 'zod';
import type { Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { Argon2Pool } from './argon2-pool.js';
import { storePasswordHash } from './repo.js';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;
export const MIN_SCORE = 3;

/** OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane). */
const ARGON2 = { algorithm: 2 as Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most this many argon2id computations run at once (one per core), each on its own worker thread. More at once
 * (libuv's 4 threads on a 2-core machine) only take turns with each other and with the event loop. Beyond the cap,
 * hashes wait in a FIFO queue (they are bounded upstream by the login rate limits).
 */
export const ARGON2_CONCURRENCY = Math.max(1, availableParallelism());
/** The threads argon2 runs on (started on the first hash; exported for the priority and thread-count tests). */
export const argon2Pool = new Argon2Pool(ARGON2_CONCURRENCY);
let running = 0;
const waiting: (() => void)[] = [];
/** argon2id computations in progress and queued (for the cap's test and metrics). */
export const argon2Load = () => ({ running, waiting: waiting.length });

async function capped<T>(work: () => Promise<T>): Promise<T> {
  if (running >= ARGON2_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next)
      next(); // the slot passes straight to the next waiter
    else running--;
  }
}

export const hashPassword = (password: string) =>
  capped(() => argon2Pool.run({ op: 'hash', password, options: ARGON2 }));
const verify = (hash: string, password: string) => capped(() => argon2Pool.run({ op: 'verify', hash, password }));

/** A hash of a random password: verified against when there is no user, so failures take the same time. */
let dummyHash: Promise<string> | null = null;
const getDummyHash = () => (dummyHash ??= hashPassword(`dummy-${Math.random()}-${Date.now()}`));

export async function verifyPassword(passwordHash: string | null | undefined, password: string): Promise<boolean> {
  if (!passwordHash) {
    const dummy = await getDummyHash();
    await verify(dummy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/**
 * The zxcvbn dictionaries cost ~30 MB and ~0.2 s to load and are needed only when a password is set: loaded on the
 * first check (concurrent first checks share the one load), not at start.
 */
let zxcvbn: Promise<ZxcvbnFactory> | null = null;
const strengthChecker = () =>
  (zxcvbn ??= Promise.all([
    import('@zxcvbn-ts/core'),
    import('@zxcvbn-ts/language-common'),
    import('@zxcvbn-ts/language-en'),
  ]).then(
    ([{ ZxcvbnFactory }, common, en]) =>
      new ZxcvbnFactory({
        dictionary: { ...common.dictionary, ...en.dictionary },
        graphs: common.adjacencyGraphs,
        translations: en.translations,
      }),
    (err: unknown) => {
      zxcvbn = null;
      throw err;
    },
  ));

/**
 * A new password as the wire carries it. Its rules (8..256 characters, strength) are checked by assertStrongPassword,
 * so that every refusal is the same 400 weak_password with feedback; the bound here only stops megabyte bodies.
 */
export const newPasswordField = z
  .string()
  .max(1024, 'at most 1024 characters')
  .meta({
    description: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters, zxcvbn score >= ${MIN_SCORE}, not containing the email; else 400 weak_password`,
  });
/** A password being presented (login, re-check): bounded so nobody hashes megabytes. */
export const presentedPasswordField = z.string().min(1).max(1024);

export async function assertStrongPassword(
  password: string,
  context: { email: string; name?: string | null },
): Promise<void> {
  const feedback: { warning: string | null; suggestions: string[] } = { warning: null, suggestions: [] };
  const local = context.email.split('@')[0]!.toLowerCase();
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    throw new AppError('weak_password', `Passwords are ${PASSWORD_MIN} to ${PASSWORD_MAX} characters long.`, {
      details: {
        feedback: { warning: 'Wrong length', suggestions: [`Use ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`] },
      },
    });
  }
  if (local.length >= 3 && password.toLowerCase().includes(local)) {
    throw new AppError('weak_password', 'The password must not contain your email address.', {
      details: {
        feedback: { warning: 'Contains your email address', suggestions: ['Avoid your name and email in a password.'] },
      },
    });
  }
  const userInputs = [
    local,
    context.email.toLowerCase(),
    ...(context.name ? context.name.toLowerCase().split(/\s+/) : []),
  ];
  // zxcvbn is costly on very long inputs; the first 100 characters decide the score in practice.
  const result = (await strengthChecker()).check(password.slice(0, 100), userInputs);
  if (result.score < MIN_SCORE) {
    feedback.warning = result.feedback.warning ?? 'This password is easy to guess';
    feedback.suggestions = result.feedback.suggestions;
    throw new AppError('weak_password', 'The password is too easy to guess.', {
      details: { feedback, score: result.score },
    });
  }
}

/** Stores a new password hash (inside the caller's transaction); the caller revokes sessions as its rule says. */
export async function setPassword(deps: Pick<Deps, 'clock'>, tx: Tx, userId: string, newHash: string): Promise<void> {
  await storePasswordHash(tx, userId, newHash, deps.clock.now());
}
