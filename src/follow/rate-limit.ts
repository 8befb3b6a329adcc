// A token bucket: at most `ratePerSecond` touches on average, `burst` at once,
// so that a storm of config changes cannot roll the whole cluster at once.

export class TokenBucket {
  #tokens: number;
  #updatedAt: number;

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    now: number,
  ) {
    this.#tokens = burst;
    this.#updatedAt = now;
  }

  /** Takes a token if one is available; otherwise returns the milliseconds until one is. */
  take(now: number): { ok: true } | { ok: false; waitMs: number } {
    this.#refill(now);
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return { ok: true };
    }
    return { ok: false, waitMs: Math.ceil(((1 - this.#tokens) / this.ratePerSecond) * 1000) };
  }

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#updatedAt) / 1000;
    this.#tokens = Math.min(this.burst, this.#tokens + elapsed * this.ratePerSecond);
    this.#updatedAt = now;
  }
}
