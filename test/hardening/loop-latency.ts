// The hardening tests' responsiveness bound; the polling itself is in test/support/healthz-poll.ts.
import { expect } from 'vitest';
import type { Latency } from '../support/healthz-poll.js';

export { pollHealthz, whilePolling, type Latency } from '../support/healthz-poll.js';

/**
 * The service stays responsive: 95 % of /healthz answers within 500 ms and none waits 2 s. These bounds hold on a
 * 2-core runner that shares its cores with a second test worker (measured there with a third process busy: p95 100–260 ms);
 * the 100 ms goal itself is measured by the benchmark on a quiet machine, not asserted here. A loop that never
 * yields (the bug: 6 s, 29 s, then time-outs) fails both bounds.
 */
export function expectResponsive(latency: Latency, during: string) {
  const text = `/healthz during ${during}: p95 ${latency.p95.toFixed(0)} ms, slowest ${latency.max.toFixed(0)} ms over ${latency.polls} polls`;
  expect(latency.polls, text).toBeGreaterThan(0);
  expect(latency.p95, text).toBeLessThan(500);
  expect(latency.max, text).toBeLessThan(2_000);
}
