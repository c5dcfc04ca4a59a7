/**
 * Standard Schema v1 (https://standardschema.dev), the interface zod 4, valibot and arktype
 * schemas all carry: a webhook's body, a workflow's parameters, a step's result and a
 * dialog's answer may each come from any of them.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/** The value a schema gives after validation (zod: `z.output<typeof schema>`). */
export type SchemaOutput<S extends StandardSchemaV1> = NonNullable<
  S["~standard"]["types"]
>["output"];

export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { "~standard"?: { validate?: unknown } })["~standard"]?.validate === "function"
  );
}

/** What validation found: the schema's value, or at most `limit` issues as `path: message`. */
export type Validated<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly string[] };

/**
 * Validates `value` against `schema`, with the issues said as `where: message` (the first
 * `limit` of them).
 *
 * @example
 * const checked = await validate(z.object({ uid: z.string() }), body);
 * if (!checked.ok) throw new Error(checked.issues.join("; "));
 */
export async function validate<S extends StandardSchemaV1>(
  schema: S,
  value: unknown,
  limit = 5,
): Promise<Validated<SchemaOutput<S>>> {
  const result = await schema["~standard"].validate(value);
  if (!result.issues) return { ok: true, value: result.value as SchemaOutput<S> };
  return {
    ok: false,
    issues: result.issues.slice(0, limit).map((issue) => {
      const where = (issue.path ?? [])
        .map((part) => String(typeof part === "object" ? part.key : part))
        .join(".");
      return where === "" ? issue.message : `${where}: ${issue.message}`;
    }),
  };
}
