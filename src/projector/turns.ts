/**
 * Turns at a shared resource, `slots` at a time, given to the waiter of the lowest rank
 * first (ties in the order they came): the projections catching up from a start take turns
 * at the machine's cores, the REST channel's first (`Projector`).
 */
export class Turns {
  private free: number;
  private readonly waiting: { readonly rank: number; readonly go: () => void }[] = [];

  constructor(slots: number) {
    this.free = Math.max(1, slots);
  }

  /** Resolves when it is `rank`'s turn, with the function that ends it (call it once). */
  async take(rank: number): Promise<() => void> {
    if (this.free > 0) {
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
      const next = this.waiting.shift();
      if (next) next.go();
      else this.free++;
    };
  }
}
