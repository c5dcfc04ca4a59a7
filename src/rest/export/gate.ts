import { RestError } from "../errors.ts";

/** Too many exports are streaming in this process: 429, retry shortly. */
export class ExportBusyError extends RestError {
  constructor(limit: number) {
    super("ANNAL_EXPORT_BUSY", `${limit} exports are already streaming from this process`, {
      status: 429,
      hint: "retry in a few seconds, or raise [rest.export] maxConcurrent",
      details: { maxConcurrent: limit },
      headers: { "retry-after": "5" },
    });
  }
}

/**
 * Bounds the exports one process streams at once: each holds a database connection for as
 * long as its client reads, so without a bound a few slow downloads could take the pool.
 */
export class ExportGate {
  readonly #limit: number;
  #running = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Takes a place, or throws `ExportBusyError`; the function gives it back (once). */
  enter(): () => void {
    if (this.#running >= this.#limit) throw new ExportBusyError(this.#limit);
    this.#running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
    };
  }

  get running(): number {
    return this.#running;
  }
}
