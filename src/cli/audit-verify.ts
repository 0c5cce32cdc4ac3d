// `npm run audit:verify`: recomputes every audit hash chain (each partner's and the global one) on the configured
// database. One line per chain; exit 0 when all hold, 1 when one is broken, 2 when the check could not run.
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase, type Database } from '../db/connect.js';
import { verifyAllChains } from '../modules/audit/verify.js';

async function main(): Promise<number> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 78; // EX_CONFIG, as the service
    }
    throw err;
  }
  let database: Database;
  try {
    // Read-only: no migration. An embedded data directory held by a running service is refused (its lock).
    database = await openDatabase(config);
  } catch (err) {
    console.error(`audit:verify: cannot open the database: ${err instanceof Error ? err.message : String(err)}`);
    return 2;
  }
  try {
    const reports = await verifyAllChains(database.db);
    for (const r of reports) {
      const chain = r.partnerId ? `partner ${r.partnerId}` : 'global';
      console.log(r.ok ? `ok      ${chain}: ${r.checked} records` : `BROKEN  ${chain}: ${r.checked} records, first broken record ${r.firstBrokenId}`);
    }
    const broken = reports.filter((r) => !r.ok).length;
    const total = reports.reduce((n, r) => n + r.checked, 0);
    console.log(broken ? `${broken} of ${reports.length} chains broken (${total} records checked)` : `all ${reports.length} chains intact (${total} records checked)`);
    return broken ? 1 : 0;
  } finally {
    await database.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(2);
  },
);
