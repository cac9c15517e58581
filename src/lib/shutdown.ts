import type { Logger } from './logger.ts';

type Step = { name: string; run: () => Promise<unknown> | unknown };

/**
 * Graceful shutdown: steps run in reverse order of registration (stop accepting first, close pools
 * last). The whole sequence must finish within the deadline, else the process exits anyway.
 */
export class Shutdown {
  private readonly steps: Step[] = [];
  private running: Promise<void> | null = null;
  private readonly logger: Logger;
  private readonly deadlineMs: number;
  constructor(logger: Logger, deadlineMs = 25_000) {
    this.logger = logger;
    this.deadlineMs = deadlineMs;
  }

  add(name: string, run: Step['run']): void {
    this.steps.push({ name, run });
  }

  /** Listen for SIGTERM/SIGINT and exit when every step has run. */
  listen(): void {
    const onSignal = (signal: NodeJS.Signals) => {
      this.logger.info({ signal }, 'shutting down');
      const timer = setTimeout(() => {
        this.logger.error('shutdown deadline passed; exiting');
        process.exit(1);
      }, this.deadlineMs);
      timer.unref();
      void this.run().then(() => process.exit(0));
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of [...this.steps].reverse()) {
        try {
          await step.run();
        } catch (err) {
          this.logger.warn({ err, step: step.name }, 'shutdown step failed');
        }
      }
    })();
    return this.running;
  }
}
