interface Waiting<Item, Result> {
  readonly item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/**
 * Runs work in batches, one batch per key at a time: the first item submitted for a key starts
 * at once, and the items submitted while it runs wait and go together in the next batch (up to
 * `maxSize`, as `sizeOf` counts). `work` gives one result per item, or an Error refusing that
 * item alone; when `work` throws, every item of the batch is refused with it.
 */
export class GroupCommit<Item, Result> {
  private readonly work: (key: string, items: Item[]) => Promise<(Result | Error)[]>;
  private readonly sizeOf: (item: Item) => number;
  private readonly maxSize: number;
  /** A key is here while its batches run; later submissions join its queue. */
  private readonly queues = new Map<string, Waiting<Item, Result>[]>();

  constructor(
    work: (key: string, items: Item[]) => Promise<(Result | Error)[]>,
    sizeOf: (item: Item) => number,
    maxSize: number,
  ) {
    this.work = work;
    this.sizeOf = sizeOf;
    this.maxSize = maxSize;
  }

  submit(key: string, item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const waiting = { item, resolve, reject };
      const queue = this.queues.get(key);
      if (queue) {
        queue.push(waiting);
        return;
      }
      this.queues.set(key, [waiting]);
      void this.drain(key);
    });
  }

  private async drain(key: string): Promise<void> {
    const queue = this.queues.get(key)!;
    while (queue.length > 0) {
      let count = 0;
      let size = 0;
      // At least one item per batch, however large it is.
      while (
        count < queue.length &&
        (count === 0 || size + this.sizeOf(queue[count]!.item) <= this.maxSize)
      ) {
        size += this.sizeOf(queue[count]!.item);
        count++;
      }
      const batch = queue.splice(0, count);
      try {
        const results = await this.work(
          key,
          batch.map((waiting) => waiting.item),
        );
        batch.forEach((waiting, index) => {
          const result = results[index]!;
          if (result instanceof Error) waiting.reject(result);
          else waiting.resolve(result);
        });
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    // No await between the loop's last check and this: nothing can have joined the queue.
    this.queues.delete(key);
  }
}
