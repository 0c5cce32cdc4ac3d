// The liveness row of each session, kept by this instance so a warm authenticated request runs no SQL. Kept only while
// the database's change channel (gh_liveness, migration 0017: triggers on every table the liveness statement reads)
// is healthy; an announced change drops the rows it concerns, a channel that is down or was reconnected drops all of
// them and the cache is bypassed (the database is read) until it is healthy again. A hit waits for the channel's
// barrier (src/db/notify.ts), so a change committed before the request is always seen. Rows age out after maxAgeMs.
import { performance } from 'node:perf_hooks';
import type { Db } from '../db/connect.js';
import { listenChannel, type NotifyChannel } from '../db/notify.js';
import type { SessionRow } from './repo.js';

export const LIVENESS_CHANNEL = 'gh_liveness';

interface Entry {
  row: SessionRow;
  at: number;
}

export interface LivenessCacheOptions {
  /** Bound on sessions kept; the oldest inserted goes first. */
  max?: number;
  /** A safety net only: invalidation is by push. */
  maxAgeMs?: number;
  /** Monotonic milliseconds. */
  now?: () => number;
}

export class LivenessCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byUser = new Map<string, Set<string>>();
  /** Bumped by every invalidation: a row read before one is not stored after it. */
  private generation = 0;
  private channel: NotifyChannel | null = null;
  private readonly max: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(opts: LivenessCacheOptions = {}) {
    this.max = opts.max ?? 10_000;
    this.maxAgeMs = opts.maxAgeMs ?? 5_000;
    this.now = opts.now ?? (() => performance.now());
  }

  get size(): number {
    return this.entries.size;
  }

  /** Listens for changes; until this resolves (and whenever the channel is unhealthy) the cache is bypassed. */
  async start(db: Db): Promise<void> {
    if (this.channel || this.maxAgeMs <= 0) return;
    this.channel = await listenChannel(db, LIVENESS_CHANNEL, {
      onMessage: (p) => this.invalidate(p),
      onReset: () => this.reset(),
    });
  }

  async stop(): Promise<void> {
    const channel = this.channel;
    this.channel = null;
    this.reset();
    await channel?.close();
  }

  /** Whether rows may be served and stored now; an unhealthy channel drops every row. */
  usable(): boolean {
    if (this.channel?.healthy()) return true;
    if (this.entries.size) this.reset();
    return false;
  }

  /**
   * The cached row of the session, if it belongs to `userId`, is young enough and the channel is healthy; first the
   * channel's barrier, so every change committed before this call has been applied (the next request is exact).
   */
  async get(sessionId: string, userId: string): Promise<SessionRow | null> {
    if (!this.usable() || !this.entries.has(sessionId)) return null;
    if (!(await this.channel?.sync())) return null;
    return this.peek(sessionId, userId);
  }

  /** The row as held now, without the barrier. */
  peek(sessionId: string, userId: string): SessionRow | null {
    if (!this.usable()) return null;
    const hit = this.entries.get(sessionId);
    if (!hit) return null;
    if (this.now() - hit.at >= this.maxAgeMs || hit.row.user_id !== userId) {
      this.delete(sessionId);
      return null;
    }
    return hit.row;
  }

  /** Taken before reading the row from the database, handed back to set(). */
  ticket(): number {
    return this.generation;
  }

  /** Stores a row read after `ticket()`, unless anything was invalidated meanwhile (the row may predate it). */
  set(ticket: number, row: SessionRow): void {
    if (ticket !== this.generation || !this.usable()) return;
    this.delete(row.session_id);
    if (this.entries.size >= this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.delete(oldest);
    }
    this.entries.set(row.session_id, { row, at: this.now() });
    let sessions = this.byUser.get(row.user_id);
    if (!sessions) this.byUser.set(row.user_id, (sessions = new Set()));
    sessions.add(row.session_id);
  }

  /** A change announced by the database: 's:<session>', 'u:<user>' or '*'. Anything unknown drops everything. */
  invalidate(payload: string): void {
    this.generation++;
    if (payload.startsWith('s:')) this.delete(payload.slice(2));
    else if (payload.startsWith('u:')) {
      for (const sid of [...(this.byUser.get(payload.slice(2)) ?? [])]) this.delete(sid);
    } else this.clear();
  }

  reset(): void {
    this.generation++;
    this.clear();
  }

  private clear(): void {
    this.entries.clear();
    this.byUser.clear();
  }

  private delete(sessionId: string): void {
    const hit = this.entries.get(sessionId);
    if (!hit) return;
    this.entries.delete(sessionId);
    const sessions = this.byUser.get(hit.row.user_id);
    sessions?.delete(sessionId);
    if (sessions && !sessions.size) this.byUser.delete(hit.row.user_id);
  }
}
