import { z } from "zod";
import { ConfigError } from "./errors.ts";
import { formatKeyPath } from "./key-path.ts";
import type { ConfigSchema } from "./schema.ts";

/**
 * Checks the expanded file against the schema and resolves defaults, durations and paths.
 * Unknown keys are reported before anything else: a misspelt key usually also leaves a
 * required one missing, and the misspelling is the thing to fix.
 *
 * `origins` maps key paths set from the environment (`database.url`) to the variable
 * (`DATABASE_URL`), so a message can say where a bad value came from.
 */
export function validateConfig(
  schema: ConfigSchema,
  input: unknown,
  file: string,
  origins: ReadonlyMap<string, string>,
): z.output<ConfigSchema> {
  // `reportInput` only so that a missing key can be told from a wrong one; inputs are never
  // put into messages.
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;

  const unknown = result.error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ parent: issue.path, key: formatKeyPath([...issue.path, key]) }))
      : [],
  );
  if (unknown.length > 0) {
    const keys = unknown.map(({ key }) => key);
    const first = unknown[0]!;
    const known = knownKeysAt(schema, first.parent);
    const where =
      first.parent.length === 0 ? "at the top level" : `in ${formatKeyPath(first.parent)}`;
    throw new ConfigError(
      "ANNAL_CONFIG_UNKNOWN_KEY",
      `${plural(keys.length, "unknown key")} ${keys.join(", ")} in ${file}`,
      {
        file,
        keys,
        hint:
          known.length > 0
            ? `the keys allowed ${where} are: ${known.join(", ")}`
            : "check the spelling against the documentation of annal.toml",
      },
    );
  }

  const problems = result.error.issues.map((issue) => {
    const key = formatKeyPath(issue.path);
    const origin = origins.get(key);
    const from = origin === undefined ? "" : ` (set by the environment variable ${origin})`;
    const missing = issue.code === "invalid_type" && issue.input === undefined;
    return { key, text: missing ? `${key} is required` : `${key}${from}: ${issue.message}` };
  });
  throw new ConfigError(
    "ANNAL_CONFIG_INVALID",
    `${plural(problems.length, "invalid value")} in ${file}: ${problems.map((p) => p.text).join("; ")}`,
    { file, keys: problems.map(({ key }) => key) },
  );
}

function plural(count: number, noun: string): string {
  return count === 1 ? noun : `${count} ${noun}s`;
}

/** The keys the schema allows in the table at `path`, for the hint on an unknown key. */
function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (typeof segment === "number" && current instanceof z.ZodArray) {
      current = unwrap(current.element as z.ZodType);
    } else if (typeof segment === "string" && current instanceof z.ZodObject) {
      const field: z.ZodType | undefined = (current.shape as Record<string, z.ZodType>)[segment];
      current = field === undefined ? undefined : unwrap(field);
    } else {
      return [];
    }
  }
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

/** Looks through defaults, optionality and transforms to the schema of what the user writes. */
function unwrap(schema: z.ZodType): z.ZodType {
  if (
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodPrefault ||
    schema instanceof z.ZodNullable
  ) {
    return unwrap(schema.unwrap() as z.ZodType);
  }
  if (schema instanceof z.ZodPipe) return unwrap(schema.in as z.ZodType);
  return schema;
}
