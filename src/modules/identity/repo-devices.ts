// Known devices of a user: seen, recorded and bound to a session (part of repo.ts).
import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { knownDevices, sessions } from '../../db/schema/index.js';

/** A known device of the user seen now; its id, or null when the device is not known. */
export async function touchKnownDevice(tx: Executor, userId: string, tokenHash: string, now: Date) {
  const [known] = await tx
    .update(knownDevices)
    .set({ lastSeenAt: now })
    .where(and(eq(knownDevices.userId, userId), eq(knownDevices.tokenHash, tokenHash)))
    .returning({ id: knownDevices.id });
  return known?.id ?? null;
}

export async function hasKnownDevice(tx: Executor, userId: string): Promise<boolean> {
  const [other] = await tx
    .select({ id: knownDevices.id })
    .from(knownDevices)
    .where(eq(knownDevices.userId, userId))
    .limit(1);
  return Boolean(other);
}

export async function insertKnownDevice(tx: Executor, userId: string, tokenHash: string, now: Date): Promise<string> {
  const [device] = await tx
    .insert(knownDevices)
    .values({ userId, tokenHash, createdAt: now, lastSeenAt: now })
    .returning({ id: knownDevices.id });
  return device!.id;
}

export async function bindSessionDevice(tx: Executor, sessionId: string, deviceId: string): Promise<void> {
  await tx.update(sessions).set({ deviceId }).where(eq(sessions.id, sessionId));
}
