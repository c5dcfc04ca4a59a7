/** `Prefer: handling=strict|lenient` (RFC 7240 §4.4). */
export type Handling = "strict" | "lenient";

export interface Preferences {
  readonly handling: Handling;
  /** The request stated a handling preference: answer with `Preference-Applied`. */
  readonly stated: boolean;
}

/**
 * Reads the `handling` preference from the request's `Prefer` headers: the first one stated
 * wins (RFC 7240 §2), a value other than `strict` or `lenient` is ignored, as are other
 * preferences. The default is lenient.
 */
export function readPreferences(header: string | string[] | undefined): Preferences {
  const lines = header === undefined ? [] : Array.isArray(header) ? header : [header];
  for (const line of lines) {
    for (const item of line.split(",")) {
      const [token = "", value = ""] = (item.split(";")[0] ?? "").split("=");
      if (token.trim().toLowerCase() !== "handling") continue;
      const handling = value.trim().replace(/^"|"$/g, "").toLowerCase();
      if (handling === "strict" || handling === "lenient") return { handling, stated: true };
    }
  }
  return { handling: "lenient", stated: false };
}
