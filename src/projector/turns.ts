/**
 * Turns at a shared resource, `slots` at a time, given to the waiter of the lowest rank
 * first (ties in the order they came): the projections catching up from a start take turns
 * at the machine's cores, the REST channel's first (`Projector`).
 */
export class Turns {
  private readonly slots: number;
  private free: number;
  private readonly waiting: { readonly rank: number; readonly go: () => void }[] = [];

  constructor(slots: number) {
    this.slots = Math.max(1, slots);
    this.free = this.slots;
  }

  /**
   * Resolves when it is `rank`'s turn, with the function that ends it (call it once).
   *
   * `alone`: the turn takes every slot when every slot is free, so that nothing else runs
   * until it ends; when some are taken it is one slot like any other (it never waits for the
   * turns under way to end: a projection that is alone at a first start is not put behind a
   * bulk load that happened to start first).
   */
  async take(rank: number, options: { alone?: boolean } = {}): Promise<() => void> {
    let held = 1;
    if (options.alone && this.free === this.slots) {
      held = this.slots;
      this.free = 0;
    } else if (this.free > 0) {
      this.free--;
    } else {
      await new Promise<void>((go) => {
        const at = this.waiting.findIndex((waiter) => waiter.rank > rank);
        this.waiting.splice(at === -1 ? this.waiting.length : at, 0, { rank, go });
      });
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      for (let slot = 0; slot < held; slot++) {
        const next = this.waiting.shift();
        if (next) next.go();
        else this.free++;
      }
    };
  }
}
