/**
 * Shared pieces for the framework benchmark servers.
 *
 * Every server uses exactly the same JWT check (`createVerifier`) and the same
 * response bodies, so the only thing that differs between them is the HTTP layer.
 */
import { importJWK, jwtVerify, type JWK } from 'jose';

export const HOST = '127.0.0.1';
export const JWT_ALG = 'EdDSA';
export const JWT_ISSUER = 'https://gatehouse.bench.invalid';
export const JWT_AUDIENCE = 'gatehouse-bench-api';
/** Env var carrying the Ed25519 public key as a JSON-serialised JWK. */
export const PUBLIC_JWK_ENV = 'BENCH_JWT_PUBLIC_JWK';

export const ROUTE_PING = '/api/v1/ping';
export const ROUTE_HELLO = '/api/v1/hello';

export const HELLO_BODY = { hello: 'world', ok: true } as const;
export const UNAUTHORIZED_BODY = { error: 'unauthorized', ok: false } as const;
export const NOT_FOUND_BODY = { error: 'not_found', ok: false } as const;

export interface PingBody {
  sub: string;
  ok: true;
}

/** Resolves to the `sub` claim of a valid token, or `null` for a missing/invalid one. */
export type Verifier = (authorization: string | undefined) => Promise<string | null>;

const BEARER_PREFIX = 'Bearer ';

/** Imports the public key ONCE and returns a verifier closed over the key object. */
export async function createVerifier(): Promise<Verifier> {
  const raw = process.env[PUBLIC_JWK_ENV];
  if (raw === undefined || raw === '') {
    throw new Error(`${PUBLIC_JWK_ENV} is not set`);
  }
  const key = await importJWK(JSON.parse(raw) as JWK, JWT_ALG);

  return async (authorization) => {
    if (authorization === undefined || !authorization.startsWith(BEARER_PREFIX)) return null;
    try {
      const { payload } = await jwtVerify(authorization.slice(BEARER_PREFIX.length), key, {
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
        algorithms: [JWT_ALG],
      });
      return typeof payload.sub === 'string' ? payload.sub : null;
    } catch {
      return null;
    }
  };
}

export function parsePortArg(argv: readonly string[] = process.argv): number {
  const port = Number(argv[2]);
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) {
    throw new Error(`usage: <server>.ts <port>  (got ${String(argv[2])})`);
  }
  return port;
}

/** The parent (run.ts) waits for this exact line on stdout. */
export function announceListening(port: number): void {
  process.stdout.write(`LISTENING ${port}\n`);
}

/** Closes the server on SIGTERM/SIGINT and exits 0; force-exits if closing hangs. */
export function closeOnSignal(close: () => Promise<void>): void {
  let closing = false;
  const handler = (): void => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(1), 3_000).unref();
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/**
 * When started by run.ts (BENCH_EXIT_WITH_PARENT=1), exit once our stdin pipe closes, i.e. when
 * the parent is gone, so a crashed or interrupted benchmark never leaves processes behind.
 */
export function exitWithParent(): void {
  if (process.env.BENCH_EXIT_WITH_PARENT !== '1') return;
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
  process.stdin.unref(); // watching the pipe must not keep the process alive by itself
}

export function runMain(main: () => Promise<void>): void {
  exitWithParent();
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
