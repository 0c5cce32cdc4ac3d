// A LISTEN channel of the database, with a barrier and a health signal the caller can trust to fail closed.
// PGlite: the process holds the database; a notification is handed over (queued as a microtask) while the committing
// statement's answer is parsed, before that statement resolves, so nothing is ever missed or late.
// PostgreSQL: one dedicated connection per instance LISTENs. Delivery is asynchronous, so sync() is a barrier: it
// resolves once this connection has sent a NOTIFY of its own *after* the call and received it back. Notifications
// arrive in commit order, so every change committed before sync() was called has then been handled. Concurrent
// callers share one round trip. Any drop, reconnection or stalled barrier calls onReset (messages may have been missed).
import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Db } from './connect.js';

/** A barrier not back by then means the channel is stalled: it is dropped and reconnected. */
export const STALL_MS = 2000;
const RECONNECT_MS = [250, 1000, 2000, 5000];

export interface ChannelHandlers {
  onMessage(payload: string): void;
  /** The channel went down or came back: anything derived from earlier messages must be dropped. */
  onReset(): void;
}

export interface NotifyChannel {
  /** False while the channel is down or reconnecting. */
  healthy(): boolean;
  /** True once every change committed before the call has been handed to onMessage; false when that is unknown. */
  sync(): Promise<boolean>;
  close(): Promise<void>;
}

export async function listenChannel(db: Db, channel: string, handlers: ChannelHandlers): Promise<NotifyChannel> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
  const client = (db as unknown as { $client: PGlite | pg.Pool }).$client;
  if (!('totalCount' in client)) return listenPglite(client, channel, handlers);
  const listener = new PgListener((client as unknown as { options: pg.ClientConfig }).options, channel, handlers);
  await listener.start(); // the first attempt only: a failure leaves the channel down and retrying, not the boot failed
  return listener;
}

async function listenPglite(pglite: PGlite, channel: string, handlers: ChannelHandlers): Promise<NotifyChannel> {
  let open = true;
  const unlisten = await pglite.listen(channel, (payload) => handlers.onMessage(payload));
  return {
    healthy: () => open && !pglite.closed,
    sync: async () => open && !pglite.closed,
    close: async () => {
      open = false;
      handlers.onReset();
      if (!pglite.closed) await unlisten().catch(() => {});
    },
  };
}

interface Batch {
  promise: Promise<boolean>;
  resolve(ok: boolean): void;
}

function batch(): Batch {
  let resolve!: (ok: boolean) => void;
  const promise = new Promise<boolean>((r) => (resolve = r));
  return { promise, resolve };
}

class PgListener implements NotifyChannel {
  private client: pg.Client | null = null;
  private up = false;
  private closed = false;
  private attempts = 0;
  private seq = 0;
  /** The last of our own pings received back: a barrier counts only if its ping came back on this connection. */
  private seen = 0;
  private readonly pingPrefix = `ping:${randomBytes(6).toString('hex')}:`;
  /** The barrier round trip on the wire, and the callers waiting for the next one (sent after they called). */
  private inflight: Batch | null = null;
  private next: Batch | null = null;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: pg.ClientConfig,
    private readonly channel: string,
    private readonly handlers: ChannelHandlers,
  ) {}

  healthy(): boolean {
    return this.up;
  }

  sync(): Promise<boolean> {
    if (!this.up) return Promise.resolve(false);
    this.next ??= batch();
    const waiting = this.next.promise;
    if (!this.inflight) this.flushSoon();
    return waiting;
  }

  /**
   * The ping goes out once this turn of the event loop has read every request that arrived with it: they all share
   * it (each ping is a socket write and a wake-up of the database backend, the dearest part of a cached request).
   */
  private scheduled = false;
  private flushSoon(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.inflight && this.next && this.up) this.flush();
    });
  }

  /** One NOTIFY to ourselves for everyone who called sync() before it was sent (the session does not fsync it). */
  private flush(): void {
    const client = this.client;
    const current = this.next;
    this.next = null;
    if (!client || !current) return;
    this.inflight = current;
    const seq = ++this.seq;
    const ping = `${this.pingPrefix}${seq}`;
    const stalled = setTimeout(() => this.down(client), STALL_MS);
    client
      .query(`select pg_notify('${this.channel}', '${ping}')`)
      .then(
        () => {
          // Behind a transaction pooler the NOTIFY may run on another server connection than the LISTEN: not a barrier.
          const ok = client === this.client && this.up && this.seen >= seq;
          current.resolve(ok);
          if (!ok) this.down(client);
        },
        () => {
          current.resolve(false);
          this.down(client);
        },
      )
      .finally(() => {
        clearTimeout(stalled);
        if (this.inflight === current) this.inflight = null;
        if (this.next && this.up) this.flushSoon();
      });
  }

  start(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const { connectionString, host, port, user, password, database, ssl } = this.options;
    const client = new pg.Client({
      connectionString,
      host,
      port,
      user,
      password,
      database,
      ssl,
      keepAlive: true,
      connectionTimeoutMillis: 5000,
      application_name: 'gatehouse-liveness',
    });
    this.client = client;
    client.on('notification', (m) => {
      const payload = m.payload ?? '';
      if (client !== this.client) return;
      if (!payload.startsWith('ping:')) this.handlers.onMessage(payload);
      else if (payload.startsWith(this.pingPrefix))
        this.seen = Math.max(this.seen, Number(payload.slice(this.pingPrefix.length)));
    });
    client.on('error', () => this.down(client));
    client.on('end', () => this.down(client));
    return (
      client
        .connect()
        // The connection's pings change nothing: their commits are not flushed to disk (one statement per barrier).
        .then(() => client.query(`set synchronous_commit = off; LISTEN ${this.channel}`))
        .then(() => {
          if (client !== this.client || this.closed) return;
          this.handlers.onReset(); // whatever was derived before this connection listened may be stale
          this.up = true;
          this.attempts = 0;
        })
        .catch(() => this.down(client))
    );
  }

  private down(client: pg.Client): void {
    if (client !== this.client) return;
    this.client = null;
    this.up = false;
    this.handlers.onReset();
    for (const waiting of [this.inflight, this.next]) waiting?.resolve(false);
    this.inflight = this.next = null;
    client.end().catch(() => {});
    if (this.closed) return;
    const wait = RECONNECT_MS[Math.min(this.attempts++, RECONNECT_MS.length - 1)]!;
    this.retry = setTimeout(() => void this.start(), wait);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    if (client) {
      this.down(client);
      await client.end().catch(() => {});
    }
  }
}
