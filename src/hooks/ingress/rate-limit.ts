/**
 * A token bucket: `requests` tokens, refilled evenly over `perMs`, so a sender may burst up to
 * `requests` at once and keep up `requests` per `perMs`. In memory, per process: with several
 * annal processes behind a load balancer each allows its own share.
 */
export class RateLimiter {
  private readonly capacity: number;
  private readonly refillPerMs: number;
  private readonly now: () => number;
  private tokens: number;
  private updatedAt: number;

  constructor(requests: number, perMs: number, now: () => number = Date.now) {
    this.capacity = requests;
    this.refillPerMs = requests / perMs;
    this.now = now;
    this.tokens = requests;
    this.updatedAt = now();
  }

  /** Takes a token: 0 when there was one, else the whole seconds until there will be. */
  take(): number {
    const now = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.updatedAt) * this.refillPerMs);
    this.updatedAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.tokens) / this.refillPerMs / 1000));
  }
}
