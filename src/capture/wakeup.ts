/**
 * The capture loop's wait between passes: it ends when its time is up, when `signal` aborts,
 * or at a wake. A wake that comes while no one waits (during a pass) ends the next wait at
 * once, so a write told of during a pass is not left for the interval after it; any number of
 * wakes before a wait end only that one.
 */
export class Wakeup {
  private woken = false;
  private waiting: (() => void) | undefined;

  wake(): void {
    this.woken = true;
    this.waiting?.();
  }

  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.waiting = undefined;
        this.woken = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      this.waiting = done;
    });
  }
}
