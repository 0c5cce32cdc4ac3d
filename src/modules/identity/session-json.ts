// A session as the API shows it: the caller's own list, a member's list for admins, the new-device mail.
import { UAParser } from 'ua-parser-js';
import { z } from 'zod';
import type { SessionRow } from './repo.js';

export const sessionJson = z
  .object({
    id: z.uuid(),
    createdAt: z.string(),
    lastSeenAt: z.string(),
    ip: z.string().nullable(),
    browser: z.string().nullable(),
    os: z.string().nullable(),
    method: z.string().nullable(),
    mfa: z.boolean(),
    current: z.boolean(),
  })
  .meta({ id: 'Session' });
export type SessionJson = z.infer<typeof sessionJson>;

const named = (name?: string, version?: string) =>
  name ? (version ? `${name} ${version}` : name).slice(0, 100) : null;

export function toSessionJson(s: SessionRow, currentId: string | null): SessionJson {
  const ua = s.userAgent ? new UAParser(s.userAgent.slice(0, 512)).getResult() : null;
  return {
    id: s.id,
    createdAt: s.createdAt.toISOString(),
    lastSeenAt: (s.lastUsedAt ?? s.createdAt).toISOString(),
    ip: s.ipAddress,
    browser: named(ua?.browser.name, ua?.browser.major),
    os: named(ua?.os.name, ua?.os.version),
    method: s.method,
    mfa: s.mfa,
    current: s.id === currentId,
  };
}
