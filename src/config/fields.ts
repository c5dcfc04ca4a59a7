import { resolve } from "node:path";
import { z } from "zod";
import { parseDuration } from "./duration.ts";

/**
 * Field schemas shared by the sections. Their messages say what was expected and never repeat
 * the value, which may have come from a secret environment variable.
 */

declare module "zod" {
  /**
   * What a configuration option says about itself besides `description`, read by the
   * configuration reference (`docs/configuration.md`, `src/config/reference/`).
   */
  interface GlobalMeta {
    /** A value as the user writes it in `annal.toml`, for the reference's example line. */
    example?: unknown;
    /**
     * What the reference calls the option's values where the schema alone would only say
     * "string": a duration, a path and what it is relative to.
     */
    typeName?: string;
  }
}

/** What a section's schema may depend on besides the file itself. */
export interface SectionContext {
  /** Relative state paths (`dataDir`) are resolved against this directory (the process's cwd). */
  readonly cwd: string;
  /** The configuration file's directory: relative paths to files that belong with it resolve here. */
  readonly configDir: string;
}

/** A non-empty string. */
export function text() {
  return z.string({ error: "expected a string" }).min(1, "must not be empty");
}

/**
 * A whole number from `min` to `max`. A string of digits is accepted too, because a value
 * that comes from an environment reference (`poolSize = "${POOL_SIZE}"`) is a string.
 */
export function integer(min: number, max: number) {
  const expected = `expected a whole number from ${min} to ${max}`;
  return z.preprocess(
    (value) => (typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value),
    z.number({ error: expected }).int(expected).min(min, expected).max(max, expected),
  );
}

/** A TCP port, 1 to 65535. */
export function port() {
  return integer(1, 65_535);
}

/**
 * A duration string in the grammar of `src/time/` (`"500ms"`, `"2s"`, `"5m"`, `"1h"`, `"1d"`,
 * `"1w"`, `"1h30m"`, `"PT5M"`, `"P3D"`, `"0"`), resolved to milliseconds. Zero is refused
 * unless `allowZero`, where it means "never".
 */
export function duration(options: { allowZero?: boolean } = {}) {
  const expected = `expected a duration such as "500ms", "2s", "5m", "1h", "1d", "1w" or "PT5M"${
    options.allowZero === true ? ', or "0" for never' : ""
  }`;
  return z
    .string({ error: expected })
    .transform((value, ctx) => {
      try {
        return parseDuration(value);
      } catch {
        ctx.addIssue({ code: "custom", message: `"${value}" is not a duration; ${expected}` });
        return z.NEVER;
      }
    })
    .refine((ms) => options.allowZero === true || ms > 0, "must be longer than 0")
    .meta({ typeName: options.allowZero === true ? 'duration, or "0" for never' : "duration" });
}

/** A filesystem path; a relative one is resolved against the working directory. */
export function localPath(ctx: SectionContext) {
  return text()
    .transform((path) => resolve(ctx.cwd, path))
    .meta({ typeName: "path, relative to the directory annal starts in" });
}

/** A path to files that go with the configuration (hooks), relative to the file's directory. */
export function configPath(ctx: SectionContext) {
  return text()
    .transform((path) => resolve(ctx.configDir, path))
    .meta({ typeName: "path, relative to the configuration file's directory" });
}

/** A URL with one of the given schemes (`"ldap:"`), e.g. `ldap://127.0.0.1:3890`. */
export function urlWithScheme(schemes: readonly string[], example: string) {
  return text()
    .refine((value) => schemes.includes(parseUrl(value)?.protocol ?? ""), {
      message: `expected a URL such as ${example}`,
    })
    .meta({ typeName: `URL (${schemes.map((scheme) => `${scheme}//`).join(" or ")})` });
}

/**
 * Whether a URL's host is this machine's loopback interface (`127.0.0.0/8`, `[::1]`,
 * `localhost`): what a plain-http URL may name without an explicit opt-in.
 */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

export function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** An IANA time zone name that this Node.js knows (`"UTC"`, `"Europe/Berlin"`). */
export function timeZone() {
  const expected = 'expected an IANA time zone such as "UTC" or "Europe/Berlin"';
  return z
    .string({ error: expected })
    .refine((name) => {
      try {
        new Intl.DateTimeFormat("en-US", { timeZone: name });
        return name !== "";
      } catch {
        return false;
      }
    }, expected)
    .meta({ typeName: "IANA time zone name" });
}
