// Every value sealed with the secret box, where it lives and the associated data it was sealed with: the list
// `gatehouse keys rotate-encryption` walks to re-seal them under the current ENCRYPTION_KEY.
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from './connect.js';
import type { SecretBox } from '../platform/secret-box.js';

interface SealedLocation {
  label: string;
  table: string;
  id: string;
  /** A column, or a text field of a jsonb column. */
  column: string;
  jsonField?: string;
  where?: SQL;
  aad: (row: { id: string; owner: string | null }) => string;
  owner?: string;
}

export const SEALED_LOCATIONS: SealedLocation[] = [
  {
    label: 'signing keys',
    table: 'signing_keys',
    id: 'kid',
    column: 'private_jwk_enc',
    aad: (r) => `signing-key:${r.id}`,
  },
  { label: 'TOTP secrets', table: 'users', id: 'id', column: 'mfa_secret', aad: (r) => `totp:${r.id}` },
  {
    label: 'SSO client secrets',
    table: 'sso_providers',
    id: 'id',
    column: 'client_secret',
    aad: () => 'sso-client-secret',
  },
  { label: 'SSO login nonces', table: 'sso_sessions', id: 'id', column: 'nonce', aad: () => 'sso-nonce' },
  { label: 'SSO PKCE verifiers', table: 'sso_sessions', id: 'id', column: 'code_verifier', aad: () => 'sso-verifier' },
  {
    label: 'pending TOTP setups',
    table: 'auth_flows',
    id: 'id',
    column: 'data',
    jsonField: 'secret',
    owner: 'user_id',
    where: sql`kind = 'mfa_setup'`,
    aad: (r) => `totp-setup:${r.owner}`,
  },
  {
    label: 'pending recovery codes',
    table: 'auth_flows',
    id: 'id',
    column: 'data',
    jsonField: 'recoveryCodes',
    owner: 'user_id',
    where: sql`kind = 'mfa_setup'`,
    aad: (r) => `recovery-setup:${r.owner}`,
  },
];

export interface ResealProgress {
  label: string;
  done: number;
  total: number;
  failed: number;
}

const rowsOf = <T>(result: unknown): T[] => (result as { rows?: T[] }).rows ?? (result as T[]);

/**
 * Re-seals, batch by batch, every value not sealed with the current key (the old key must be among
 * ENCRYPTION_KEYS_PREVIOUS). Each value is replaced only if unchanged meanwhile; an interrupted run resumes where it
 * stopped, since only stale values are selected. Values no configured key opens are counted as failed and left.
 */
export async function resealAll(
  db: Db,
  box: SecretBox,
  onProgress: (p: ResealProgress) => void,
  batch = 200,
): Promise<ResealProgress[]> {
  const current = `gh1.${box.currentKeyId}.%`;
  const out: ResealProgress[] = [];
  for (const loc of SEALED_LOCATIONS) {
    const value = loc.jsonField
      ? sql`(${sql.identifier(loc.column)} ->> ${loc.jsonField})`
      : sql.identifier(loc.column);
    const stale = sql`${value} is not null and ${value} not like ${current}${loc.where ? sql` and ${loc.where}` : sql``}`;
    const table = sql.identifier(loc.table);
    const id = sql.identifier(loc.id);
    const owner = loc.owner ? sql.identifier(loc.owner) : sql`null`;
    const [{ n }] = rowsOf<{ n: number }>(
      await db.execute(sql`select count(*)::int as n from ${table} where ${stale}`),
    ) as [{ n: number }];
    const progress: ResealProgress = { label: loc.label, done: 0, total: n, failed: 0 };
    onProgress(progress);
    let after = '';
    for (;;) {
      const rows = rowsOf<{ id: string; owner: string | null; value: string }>(
        await db.execute(
          sql`select ${id}::text as id, ${owner}::text as owner, ${value} as value from ${table} where ${stale} and ${id}::text > ${after} order by ${id}::text limit ${batch}`,
        ),
      );
      if (!rows.length) break;
      for (const row of rows) {
        after = row.id;
        let fresh: string;
        try {
          fresh = box.seal(box.open(row.value, loc.aad(row)), loc.aad(row));
        } catch {
          progress.failed++;
          continue;
        }
        const set = loc.jsonField
          ? sql`${sql.identifier(loc.column)} = jsonb_set(${sql.identifier(loc.column)}, ${`{${loc.jsonField}}`}::text[], to_jsonb(${fresh}::text))`
          : sql`${sql.identifier(loc.column)} = ${fresh}`;
        await db.execute(sql`update ${table} set ${set} where ${id}::text = ${row.id} and ${value} = ${row.value}`);
        progress.done++;
      }
      onProgress(progress);
    }
    out.push(progress);
  }
  return out;
}
