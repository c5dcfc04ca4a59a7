import { RestError } from "./errors.ts";
import type { Handling } from "./prefer.ts";

const MAX_PARAMETER_LENGTH = 16_384;

/**
 * A request's query parameters, read one by one by name. A parameter given twice is refused
 * (which one was meant?); an empty value counts as absent; a value holding U+0000 is refused
 * (PostgreSQL text cannot hold it). Parameters this route does not know are refused under
 * `Prefer: handling=strict` and otherwise ignored and listed in `ignored`, for the answer to
 * name (`reportIgnoredParameters`).
 */
export class QueryParameters {
  readonly #values = new Map<string, string>();
  /** The parameters this route does not take, ignored under lenient handling. */
  readonly ignored: readonly string[];

  constructor(query: unknown, known: readonly string[], handling: Handling) {
    const unknown: string[] = [];
    const entries = typeof query === "object" && query !== null ? Object.entries(query) : [];
    for (const [name, raw] of entries) {
      if (!known.includes(name)) {
        unknown.push(name);
        continue;
      }
      if (Array.isArray(raw)) {
        throw new RestError("ANNAL_PARAMETER_REPEATED", `${name}: given ${raw.length} times`, {
          hint: `give ${name} once; lists are comma-separated (fields=cn,sn)`,
          details: { parameter: name },
        });
      }
      const value = String(raw);
      if (value.length > MAX_PARAMETER_LENGTH) {
        throw new RestError(
          "ANNAL_PARAMETER_INVALID",
          `${name}: ${value.length} characters is longer than the limit of ${MAX_PARAMETER_LENGTH}`,
          { details: { parameter: name } },
        );
      }
      if (value.includes("\u0000")) {
        throw new RestError("ANNAL_PARAMETER_INVALID", `${name}: holds the character U+0000`, {
          hint: "remove the NUL character (%00)",
          details: { parameter: name },
        });
      }
      if (value !== "") this.#values.set(name, value);
    }
    if (handling === "strict" && unknown.length > 0) {
      throw new RestError(
        "ANNAL_PARAMETER_UNKNOWN",
        `unknown query parameter${unknown.length === 1 ? "" : "s"} ${unknown.map((n) => JSON.stringify(n)).join(", ")}`,
        {
          hint: `this route takes ${known.join(", ")}; Prefer: handling=lenient ignores others`,
          details: { unknown },
        },
      );
    }
    this.ignored = unknown;
  }

  get(name: string): string | undefined {
    return this.#values.get(name);
  }

  has(name: string): boolean {
    return this.#values.has(name);
  }
}

/**
 * Refuses the parameters in `unsupported` (name → hint) that `query` holds, whatever
 * `Prefer: handling` says: a parameter the caller meant, answered as if it were not there,
 * would mislead (a search given `at` would answer today's entries as the past's).
 */
export function refuseUnsupported(
  query: unknown,
  unsupported: Readonly<Record<string, string>>,
): void {
  if (typeof query !== "object" || query === null) return;
  for (const [name, hint] of Object.entries(unsupported)) {
    if (!Object.hasOwn(query, name)) continue;
    throw new RestError("ANNAL_PARAMETER_UNSUPPORTED", `${name}: this route does not take it yet`, {
      hint,
      details: { parameter: name },
    });
  }
}

/** A comma-separated list: items trimmed, empty items dropped. */
export function commaList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}
