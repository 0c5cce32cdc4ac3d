// Measures how long /healthz takes to answer, polled back to back while some hostile work runs in the same process:
// the answer time is the event-loop stall the work causes (plus a request's own cost).
import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'vitest';

export interface Latency {
  max: number;
  p95: number;
  polls: number;
}

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

export function pollHealthz(baseUrl: string, everyMs = 5) {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${baseUrl}/healthz`);
      await res.text();
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      times.push(performance.now() - started);
      await sleep(everyMs);
    }
  })();
  return {
    async stop(): Promise<Latency> {
      running = false;
      await loop;
      const sorted = [...times].sort((a, b) => a - b);
      const p95 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))]! : 0;
      return { max: Math.max(0, ...times), p95, polls: times.length };
    },
  };
}

/** Runs `work` while polling /healthz; the first few polls warm the connection up and are not counted. */
export async function whilePolling<T>(baseUrl: string, work: () => Promise<T>): Promise<{ result: T; latency: Latency }> {
  for (let i = 0; i < 3; i++) await (await fetch(`${baseUrl}/healthz`)).text();
  const poll = pollHealthz(baseUrl);
  try {
    const result = await work();
    return { result, latency: await poll.stop() };
  } catch (err) {
    await poll.stop().catch(() => undefined);
    throw err;
  }
}
