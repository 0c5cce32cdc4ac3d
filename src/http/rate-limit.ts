// Sliding-window rate limits, shared by every instance through the shared store.
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Clock } from '../platform/clock.js';
import type { SharedStore, WindowResult } from '../platform/kv.js';
import { AppError } from './errors.js';

export type LimitName = keyof Config['rateLimits'];

export class RateLimits {
  constructor(
    private readonly store: SharedStore,
    private readonly clock: Clock,
    private readonly limits: Config['rateLimits'],
    /** Called on each refusal (metrics). */
    private readonly onRefused: (name: LimitName) => void = () => {},
  ) {}

  /** Records one hit against `name` for `key`; never throws for the limit itself. */
  hit(name: LimitName, key: string): Promise<WindowResult> {
    const { limit, windowSeconds } = this.limits[name];
    return this.store.hit(`${name}:${key}`, limit, windowSeconds * 1000, this.clock.now().getTime());
  }

  /** Records a hit and answers 429 rate_limited (with retryAfter) when the window is full. */
  async enforce(name: LimitName, key: string): Promise<void> {
    const r = await this.hit(name, key);
    if (!r.allowed) {
      this.onRefused(name);
      throw new AppError('rate_limited', undefined, { retryAfter: r.retryAfter });
    }
  }

  /** Hits of `name` for `key` in the current window, recording none. */
  count(name: LimitName, key: string): Promise<number> {
    return this.store.count(`${name}:${key}`, this.limits[name].windowSeconds * 1000, this.clock.now().getTime());
  }

  reset(name: LimitName, key: string): Promise<void> {
    return this.store.reset(`${name}:${key}`);
  }

  /** A route hook: keyOf picks the key (IP, IP + email, user id...) from the request. */
  guard(name: LimitName, keyOf: (req: FastifyRequest) => string) {
    // `rateLimit` names the limit for the OpenAPI document (src/http/openapi.ts declares 429 from it).
    return Object.assign(async (req: FastifyRequest) => this.enforce(name, keyOf(req)), { rateLimit: name });
  }
}
