// TXT records for domain proofs: node's c-ares resolver (asynchronous, never on the event loop's thread), at the
// configured resolvers or the system's, with a bounded wait.
import { Resolver } from 'node:dns/promises';

export type TxtAnswer =
  | { ok: true; records: string[] }
  /** `absent`: the name or its TXT records do not exist; `unreachable`: no resolver answered in time or at all. */
  | { ok: false; reason: 'absent' | 'unreachable' };

const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN']);

/** Each try waits `timeoutMs` per resolver; two tries. */
export async function lookupTxt(name: string, servers: readonly string[], timeoutMs = 2000): Promise<TxtAnswer> {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers.length) resolver.setServers([...servers]);
  try {
    // A record longer than 255 bytes arrives as several strings: they form one value (RFC 7208 3.3).
    const records = (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    return { ok: true, records };
  } catch (err) {
    return { ok: false, reason: ABSENT.has((err as { code?: string }).code ?? '') ? 'absent' : 'unreachable' };
  }
}
