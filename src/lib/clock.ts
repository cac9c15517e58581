// Time comes from an injectable clock so tests can move it without sleeping.
export interface Clock {
  now(): Date;
  /** `now()` in epoch milliseconds, without making a Date (the cached listener read asks on every request). */
  nowMs(): number;
}

export const systemClock: Clock = { now: () => new Date(), nowMs: () => Date.now() };

/** A clock a test sets and advances by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | string | number = Date.now()) {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  nowMs(): number {
    return this.current;
  }
  set(at: Date | string | number): void {
    this.current = new Date(at).getTime();
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
