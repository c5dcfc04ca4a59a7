import type { Logger } from "../logger.ts";

/** A started part of annal, and how to stop it. */
export interface Stoppable {
  stop(): Promise<void>;
}

export const NOTHING_TO_STOP: Stoppable = { stop: async () => {} };

/**
 * What has been started, stopped in reverse order: the HTTP server before the projector,
 * the projector before the pool, the pool before the database it talks to. A part that fails
 * to stop is logged and the others still stop; `stopAll` then rejects with the first failure.
 */
export class StartedParts {
  private readonly parts: { name: string; stop: () => Promise<void> }[] = [];
  private stopping: Promise<void> | undefined;
  private readonly log: Pick<Logger, "error" | "debug">;

  constructor(log: Pick<Logger, "error" | "debug">) {
    this.log = log;
  }

  add(name: string, stop: () => Promise<void>): void {
    this.parts.push({ name, stop });
  }

  /** Stops everything once; later calls wait for the first. */
  stopAll(): Promise<void> {
    this.stopping ??= this.stopInReverse();
    return this.stopping;
  }

  private async stopInReverse(): Promise<void> {
    let firstFailure: unknown;
    for (const part of this.parts.toReversed()) {
      try {
        await part.stop();
        this.log.debug({ part: part.name }, `stopped ${part.name}`);
      } catch (error) {
        this.log.error({ part: part.name, err: error }, `${part.name} did not stop cleanly`);
        firstFailure ??= error;
      }
    }
    if (firstFailure !== undefined) throw firstFailure;
  }
}
