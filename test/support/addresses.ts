// Where things listen and which database a URL names: no import from src/, so the benchmarks' parent processes and
// the built-server helpers can use them without loading the service.
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** The same server's URL with another database (by default the maintenance one, to create and drop databases). */
export function adminUrl(baseUrl: string, database = 'postgres'): string {
  const u = new URL(baseUrl);
  u.pathname = `/${database}`;
  return u.toString();
}
