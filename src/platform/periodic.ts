// A job each instance runs every `pollMs` and on demand, one pass at a time: a call while a pass runs waits for it,
// then runs a pass of its own (so what the caller changed before calling is seen). The timer never keeps the process
// alive, and stop() waits for a pass under way.
export class PeriodicJob<T> {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<T> | null = null;

  constructor(
    private readonly pass: () => Promise<T>,
    private readonly pollMs: number,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.run().catch(() => undefined), this.pollMs);
    this.timer.unref();
    void this.run().catch(() => undefined);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.running) await this.running.catch(() => undefined);
  }

  async run(): Promise<T> {
    while (this.running) await this.running.catch(() => undefined);
    this.running = this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
