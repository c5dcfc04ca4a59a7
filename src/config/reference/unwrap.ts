import { z } from "zod";

/** Whether a key or table must be written, and what it is when it is not. */
export type Presence =
  | { readonly kind: "required" }
  | { readonly kind: "optional" }
  /** `.default()` or `.prefault()`; the value as the schema holds it. */
  | { readonly kind: "default"; readonly value: unknown };

/** A schema seen through what does not change what the user writes. */
export interface Unwrapped {
  /** What remains: an object, array, record, string, number, enum ... */
  readonly core: z.ZodType;
  /** The metadata of every layer, the outermost winning. */
  readonly meta: z.GlobalMeta;
  /** From the outermost `.optional()`, `.default()` or `.prefault()`; required when none. */
  readonly presence: Presence;
}

/**
 * Looks through `.optional()`, `.default()`, `.prefault()`, `.nullable()` and pipes to the schema
 * of what the user writes: a `.transform()` is described by its input, a `z.preprocess()` (whose
 * input is the transform) by the schema after it.
 */
export function unwrap(schema: z.ZodType): Unwrapped {
  let meta: z.GlobalMeta = {};
  let presence: Presence | undefined;
  let current = schema;
  for (;;) {
    meta = { ...z.globalRegistry.get(current), ...meta };
    if (current instanceof z.ZodOptional) {
      presence ??= { kind: "optional" };
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodDefault || current instanceof z.ZodPrefault) {
      presence ??= { kind: "default", value: current.def.defaultValue };
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodNullable) {
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodPipe) {
      const input = current.in as z.ZodType;
      current = input instanceof z.ZodTransform ? (current.out as z.ZodType) : input;
    } else {
      return { core: current, meta, presence: presence ?? { kind: "required" } };
    }
  }
}
