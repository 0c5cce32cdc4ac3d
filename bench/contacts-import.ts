// Contacts import at scale: 100,000 CSV rows streamed as text/csv into one organisation, then the same file again.
// Reports rows/s and the server process's peak RSS above its baseline, for the first import and the re-import
// (which must report every row unchanged). Run: npx tsx bench/contacts-import.ts [rows]
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { prepareTemplate } from '../test/support/db.js';
import { startApp } from '../test/support/app.js';
import { createOrg, partnerAdmin } from '../test/support/fixtures.js';

const ROWS = Number(process.argv[2] ?? 100_000);

async function writeCsv(path: string, rows: number) {
  const out = createWriteStream(path);
  out.write('externalId,previousId,firstName,lastName,email,phone,title,site\n');
  for (let i = 0; i < rows; i++) {
    const line = `ext-${i},old-${i},First${i},Last${i % 5000}x${i},person${i}@customer${i % 97}.example,+1 555 ${String(i).padStart(7, '0')},Title ${i % 13},\n`;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  out.end();
  await finished(out);
}

function sampleRss() {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 25);
  return { stop: () => (clearInterval(timer), peak) };
}

async function main() {
  await prepareTemplate();
  const dir = mkdtempSync(join(tmpdir(), 'gh-bench-'));
  const file = join(dir, 'contacts.csv');
  await writeCsv(file, ROWS);
  const t = await startApp({ LOG_LEVEL: 'warn' });
  try {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const results: string[] = [];
    for (const label of ['first import', 're-import']) {
      global.gc?.();
      const base = process.memoryUsage().rss;
      const rss = sampleRss();
      const started = performance.now();
      const res = await fetch(`${t.baseUrl}/api/v1/contacts/import?orgId=${org.id}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${api.token}`, 'content-type': 'text/csv' },
        body: Readable.toWeb(createReadStream(file)) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      const body = (await res.json()) as { summary: Record<string, number> };
      const seconds = (performance.now() - started) / 1000;
      const peak = rss.stop();
      if (res.status !== 200) throw new Error(`${label}: ${res.status} ${JSON.stringify(body)}`);
      results.push(
        `| ${label} | ${ROWS.toLocaleString()} | ${seconds.toFixed(1)} s | ${Math.round(ROWS / seconds).toLocaleString()} | ${Math.round((peak - base) / 1048576)} MiB | ${JSON.stringify(body.summary)} |`,
      );
    }
    console.log(`\nContacts import, ${ROWS.toLocaleString()} rows (${(statSync(file).size / 1048576).toFixed(1)} MiB CSV), database: ${t.deps.database.kind}\n`);
    console.log('| run | rows | time | rows/s | peak RSS above baseline | summary |');
    console.log('|---|---|---|---|---|---|');
    for (const r of results) console.log(r);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
