// Walks a hash chain in append order and recomputes every record's hash: constant memory, one batch at a time,
// handing the event loop back every few milliseconds of hashing so a long chain never stalls other requests.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Executor } from '../../db/connect.js';
import { recordHash, type AuditContent } from './chain.js';
import { chainBatch, chainIds, type AuditRow } from './repo.js';
import type { VerifyResult } from './schemas.js';

export const VERIFY_BATCH = 1000;
/** The longest the walk hashes before letting other requests run (1,000 records hash in ~10-25 ms). */
const SLICE_MS = 8;

/** The hashed content of a stored record (everything but seq and the chain fields). */
export function contentOf(row: AuditRow): AuditContent {
  return {
    id: row.id,
    at: row.at,
    action: row.action,
    result: row.result,
    actorUserId: row.actorUserId,
    actorEmail: row.actorEmail,
    partnerId: row.partnerId,
    orgId: row.orgId,
    resourceType: row.resourceType,
    resourceId: row.resourceId,
    ip: row.ip,
    userAgent: row.userAgent,
    details: row.details,
  };
}

/**
 * A record is intact when its prevHash is the stored hash of the record before it in the chain (null for the first)
 * and its hash is SHA-256 of its content and prevHash. An edited record breaks at itself; a deleted one breaks the
 * record after it. The walk goes on after a break so that `checked` always counts the whole chain.
 * A deleted tail (the newest records) leaves no trace inside the chain: anchor the head hash outside to catch that.
 */
export async function verifyChain(
  db: Executor,
  partnerId: string | null,
  batchSize = VERIFY_BATCH,
): Promise<VerifyResult> {
  let prev: string | null = null;
  let afterSeq = 0;
  let checked = 0;
  let firstBrokenId: string | null = null;
  let since = performance.now();
  for (;;) {
    const rows = await chainBatch(db, partnerId, afterSeq, batchSize);
    for (const row of rows) {
      if (performance.now() - since > SLICE_MS) {
        await nextTurn();
        since = performance.now();
      }
      checked++;
      const intact = row.prevHash === prev && recordHash(contentOf(row), row.prevHash) === row.hash;
      if (!intact && firstBrokenId === null) firstBrokenId = row.id;
      prev = row.hash;
    }
    if (rows.length < batchSize) break;
    afterSeq = rows[rows.length - 1]!.seq;
  }
  return { ok: firstBrokenId === null, checked, firstBrokenId };
}

export interface ChainReport extends VerifyResult {
  /** null: the global chain (events with no partner). */
  partnerId: string | null;
}

/** Every chain in the database, the global one first. */
export async function verifyAllChains(db: Executor, batchSize = VERIFY_BATCH): Promise<ChainReport[]> {
  const reports: ChainReport[] = [];
  for (const partnerId of await chainIds(db))
    reports.push({ partnerId, ...(await verifyChain(db, partnerId, batchSize)) });
  return reports;
}
