// Measures how long /healthz takes to answer, polled back to back while some work runs in the server's process:
// the answer time is the event-loop stall the work causes (plus a request's own cost). Used by the hardening tests
// (loose bounds) and by the benchmarks (the 100 ms goal).
import { setTimeout as sleep } from 'node:timers/promises';

export interface Latency {
  max: number;
  p95: number;
  polls: number;
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
export async function whilePolling<T>(
  baseUrl: string,
  work: () => Promise<T>,
): Promise<{ result: T; latency: Latency }> {
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
