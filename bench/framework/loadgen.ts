/**
 * Load generator, run as its own process by run.ts (never inside a server process).
 *
 * argv[2]: JSON `LoadgenConfig`. Runs a discarded warm-up, then the measured window, and prints
 * one JSON `LoadgenResult` line on stdout.
 *
 * - Latency percentiles are computed from every 2xx response's float latency (autocannon's own
 *   histogram has 1 ms resolution, too coarse for a ~1-10 ms service).
 * - Every second it also samples the server's CPU time, its own, the machine's, and how long its
 *   own threads waited for a CPU. The machine is shared with other people's processes, so each
 *   second is classified as "quiet" or "disturbed" (see `isQuiet`) and results are reported both
 *   over the whole window and over the quiet seconds only.
 */
import autocannon, { type Result } from 'autocannon';
import { exitWithParent } from './common.js';
import { machineCpu, processCpuSeconds, runDelaySeconds } from './procstat.js';

export interface QuietThresholds {
  /** Max CPU (% of one core) other processes may use on the server's core (pinned runs). */
  otherOnServerCorePercent: number;
  /** Max CPU (% of one core) other processes may use machine-wide (unpinned runs). */
  otherMachinePercent: number;
  /** Max share of the second the load generator may spend waiting for a CPU. */
  loadgenRunDelayPercent: number;
}

export interface LoadgenConfig {
  url: string;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  headers: Record<string, string>;
  /** GET unless given; a body is sent as is with every request. */
  method?: 'GET' | 'POST';
  body?: string;
  /** Server process to sample CPU time from. */
  serverPid: number;
  /** CPU the server is pinned to, or null when unpinned. */
  serverCore: number | null;
  quiet: QuietThresholds;
}

/** CPU figures are % of one core. */
export interface WindowStats {
  seconds: number;
  reqPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  serverCpuPercent: number;
  loadgenCpuPercent: number;
  /** Machine busy time minus server minus load generator: other processes and kernel work. */
  otherCpuPercent: number;
  /** Busy time of the server's core not spent by the server (NaN when unpinned). */
  otherOnServerCorePercent: number;
  loadgenRunDelayPercent: number;
  stealPercent: number;
  /** Server CPU time per 2xx response, in microseconds. */
  serverCpuMicrosPerReq: number;
}

export interface LoadgenResult {
  /** autocannon's figures for the whole measured window. */
  reqPerSecMean: number;
  reqPerSecStddev: number;
  completed2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Own per-second accounting over all complete seconds of the window. */
  all: WindowStats;
  /** The same over the quiet seconds only. */
  quiet: WindowStats;
}

/** Raw deltas for one second; times in seconds. */
interface Second {
  count: number;
  latencies: number[];
  wall: number;
  serverCpu: number;
  loadgenCpu: number;
  machineBusy: number;
  serverCoreBusy: number;
  loadgenRunDelay: number;
  steal: number;
}

function run(config: LoadgenConfig, durationSeconds: number, onResponse?: (ms: number) => void): Promise<Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: config.url,
        connections: config.connections,
        duration: durationSeconds,
        headers: config.headers,
        ...(config.method ? { method: config.method } : {}),
        ...(config.body !== undefined ? { body: config.body } : {}),
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    if (onResponse) {
      instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
        if (statusCode >= 200 && statusCode < 300) onResponse(responseTimeMs);
      });
    }
  });
}

/** Nearest-rank percentile of an ascending-sorted array. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

function summarise(seconds: readonly Second[]): WindowStats {
  const sum = (f: (s: Second) => number): number => seconds.reduce((acc, s) => acc + f(s), 0);
  const wall = sum((s) => s.wall);
  const pct = (f: (s: Second) => number): number => (sum(f) / wall) * 100;
  const count = sum((s) => s.count);
  const sorted = Float64Array.from(seconds.flatMap((s) => s.latencies)).sort();
  return {
    seconds: seconds.length,
    reqPerSec: count / wall,
    latencyP50Ms: percentile(sorted, 50),
    latencyP99Ms: percentile(sorted, 99),
    serverCpuPercent: pct((s) => s.serverCpu),
    loadgenCpuPercent: pct((s) => s.loadgenCpu),
    otherCpuPercent: pct((s) => s.machineBusy - s.serverCpu - s.loadgenCpu),
    otherOnServerCorePercent: pct((s) => s.serverCoreBusy - s.serverCpu),
    loadgenRunDelayPercent: pct((s) => s.loadgenRunDelay),
    stealPercent: pct((s) => s.steal),
    serverCpuMicrosPerReq: count > 0 ? (sum((s) => s.serverCpu) / count) * 1e6 : Number.NaN,
  };
}

/**
 * A second is quiet when the load generator barely waited for a CPU and nobody else used the
 * server's core (pinned) or, unpinned, the machine beyond the thresholds.
 */
function isQuiet(s: Second, config: LoadgenConfig): boolean {
  const pct = (x: number): number => (x / s.wall) * 100;
  const { quiet } = config;
  if (!(pct(s.loadgenRunDelay) <= quiet.loadgenRunDelayPercent)) return false;
  return config.serverCore === null
    ? pct(s.machineBusy - s.serverCpu - s.loadgenCpu) <= quiet.otherMachinePercent
    : pct(s.serverCoreBusy - s.serverCpu) <= quiet.otherOnServerCorePercent;
}

async function main(): Promise<void> {
  exitWithParent();
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('usage: loadgen.ts <json-config>');
  const config = JSON.parse(raw) as LoadgenConfig;

  if (config.warmupSeconds > 0) await run(config, config.warmupSeconds);

  const snapshot = () => ({
    wall: process.hrtime.bigint(),
    server: processCpuSeconds(config.serverPid),
    loadgen: process.cpuUsage(),
    machine: machineCpu(),
    serverCore: config.serverCore === null ? Number.NaN : machineCpu(config.serverCore).busySeconds,
    loadgenRunDelay: runDelaySeconds('self'),
  });
  const seconds: Second[] = [];
  let counted = { count: 0, latencies: [] as number[] };
  let last = snapshot();
  const timer = setInterval(() => {
    const now = snapshot();
    const loadgen = process.cpuUsage(last.loadgen);
    seconds.push({
      ...counted,
      wall: Number(now.wall - last.wall) / 1e9,
      serverCpu: now.server - last.server,
      loadgenCpu: (loadgen.user + loadgen.system) / 1e6,
      machineBusy: now.machine.busySeconds - last.machine.busySeconds,
      serverCoreBusy: now.serverCore - last.serverCore,
      loadgenRunDelay: now.loadgenRunDelay - last.loadgenRunDelay,
      steal: now.machine.stealSeconds - last.machine.stealSeconds,
    });
    counted = { count: 0, latencies: [] };
    last = now;
  }, 1_000);

  const result = await run(config, config.durationSeconds, (ms) => {
    counted.count++;
    counted.latencies.push(ms);
  });
  clearInterval(timer); // the incomplete last second is dropped

  const out: LoadgenResult = {
    reqPerSecMean: result.requests.mean,
    reqPerSecStddev: result.requests.stddev,
    completed2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    all: summarise(seconds),
    quiet: summarise(seconds.filter((s) => isQuiet(s, config))),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
