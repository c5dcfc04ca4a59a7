/**
 * What the gateway's searches read of entries whose stored attributes are large, kept between
 * requests: a group of 40,000 members is 2.4 MB of JSON, stored compressed, and every search
 * that finds it would read and decompress it whole for its `cn`. Kept by selection (the names
 * a search returns) and row (the entry and its version, so a change is a new row and nothing
 * kept is ever stale), without the matched values, which each search finds in the value index.
 * Bounded: forgotten whole when full, like the caches of normalised DNs.
 *
 * @example
 * const kept = knownValues.of(signature); // row key → values
 * knownValues.keep(signature, "0b6f…/12", { cn: ["engineering"] });
 */
export class KnownValues {
  readonly #bySelection = new Map<string, Map<string, Record<string, string[]>>>();
  readonly #capacity: number;
  readonly #maxValues: number;
  #rows = 0;

  /**
   * `capacity`: the most rows kept; `maxValues`: the most values one row may keep (a row whose
   * selection brings its thousands of members whole is not kept).
   */
  constructor(capacity = 1000, maxValues = 1000) {
    this.#capacity = capacity;
    this.#maxValues = maxValues;
  }

  /** The rows kept of a selection, by row key. */
  of(signature: string): ReadonlyMap<string, Record<string, string[]>> {
    return this.#bySelection.get(signature) ?? new Map();
  }

  /** Keeps a row's values of a selection, unless they are many. */
  keep(signature: string, row: string, values: Record<string, string[]>): void {
    let count = 0;
    for (const list of Object.values(values)) count += Array.isArray(list) ? list.length : 1;
    if (count > this.#maxValues) return;
    if (this.#rows >= this.#capacity) {
      this.#bySelection.clear();
      this.#rows = 0;
    }
    let rows = this.#bySelection.get(signature);
    if (rows === undefined) this.#bySelection.set(signature, (rows = new Map()));
    if (!rows.has(row)) this.#rows++;
    rows.set(row, values);
  }
}

/** Stored attributes at least this large (bytes, as stored) are worth keeping what was read of. */
export const LARGE_STORED_BYTES = 32 * 1024;
