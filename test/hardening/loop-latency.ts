// Measures how long /healthz takes to answer, polled back to back while some hostile work runs in the same process:
// the answer time is the event-loop stall the work causes (plus a request's own cost).
import { setTimeout as sleep } from 'node:timers/promises';

export interface Latency {
  max: number;
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
      return { max: Math.max(0, ...times), polls: times.length };
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
