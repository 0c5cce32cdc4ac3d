/** Linux /proc CPU counters, used to see how busy the server and the (shared) machine are. */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let clockTicksCache: number | undefined;

/** Kernel clock ticks per second (USER_HZ), the unit of /proc CPU counters. */
export function clockTicks(): number {
  if (clockTicksCache === undefined) {
    try {
      clockTicksCache = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicksCache = 100;
    }
  }
  return clockTicksCache;
}

/** utime + stime of a process (all its threads) in seconds; NaN if unavailable. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "(comm) ", the state is field 3; utime and stime are fields 14 and 15 (1-based).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return Number.NaN;
  }
}

export interface CpuCounters {
  /** user+nice+system+irq+softirq, in CPU-seconds. */
  busySeconds: number;
  /** Hypervisor steal time, in CPU-seconds. */
  stealSeconds: number;
}

const UNAVAILABLE: CpuCounters = { busySeconds: Number.NaN, stealSeconds: Number.NaN };

/** CPU counters from /proc/stat for the whole machine (`cpu === null`) or one CPU; NaN if unavailable. */
export function machineCpu(cpu: number | null = null): CpuCounters {
  try {
    const label = cpu === null ? 'cpu' : `cpu${cpu}`;
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${label} `));
    if (line === undefined) return UNAVAILABLE;
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const ticks = clockTicks();
    return { busySeconds: (user + nice + system + irq + softirq) / ticks, stealSeconds: steal / ticks };
  } catch {
    return UNAVAILABLE;
  }
}

/**
 * Total time the threads of a process spent runnable but waiting for a CPU (run-queue delay,
 * /proc/<pid>/task/<tid>/schedstat), in seconds; NaN if unavailable. Threads that exit between
 * two samples make the sum slightly low, which only matters for short-lived threads.
 */
export function runDelaySeconds(pid: number | 'self'): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]);
      } catch {
        // thread exited meanwhile
      }
    }
    return ns / 1e9;
  } catch {
    return Number.NaN;
  }
}
