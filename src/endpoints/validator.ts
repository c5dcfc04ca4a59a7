import { vValidator as honoValibot } from "@hono/valibot-validator";
import type { BaseIssue, GenericSchema, GenericSchemaAsync } from "valibot";
import { AnnalError } from "../errors/index.ts";

/**
 * `@hono/valibot-validator` with annal's refusal: a 400 problem `ANNAL_ENDPOINT_INVALID_INPUT`
 * naming each path and what was expected, never the values (the library's own answer echoes
 * the input, which may be a password). A hook of your own replaces it.
 *
 * @example
 * app.post("/reset", vValidator("json", v.object({ uid: v.string() })), (c) => {
 *   const { uid } = c.req.valid("json");
 * });
 */
export const vValidator: typeof honoValibot = ((target, schema, hook) =>
  Object.assign(
    honoValibot(
      target,
      schema,
      hook ??
        (((result: { success: boolean; issues?: readonly BaseIssue<unknown>[] }) => {
          if (!result.success) throw invalidInput(target, result.issues ?? []);
        }) as unknown as NonNullable<typeof hook>),
    ),
    // What it validates, for the OpenAPI document (`describedInput`).
    { [VALIDATES]: { target, schema } satisfies ValidatedInput },
  )) as typeof honoValibot;

const VALIDATES = Symbol.for("annal.endpoints.validates");

/** What a route's validator checks: the part of the request and its valibot schema. */
export interface ValidatedInput {
  readonly target: string;
  readonly schema: GenericSchema | GenericSchemaAsync;
}

/** The input a route handler validates, when it is `vValidator` (also as Hono wraps it). */
export function describedInput(handler: unknown): ValidatedInput | undefined {
  if (typeof handler !== "function") return undefined;
  const own = (handler as { [VALIDATES]?: ValidatedInput })[VALIDATES];
  if (own !== undefined) return own;
  return describedInput((handler as { __COMPOSED_HANDLER?: unknown }).__COMPOSED_HANDLER);
}

function invalidInput(target: string, issues: readonly BaseIssue<unknown>[]): AnnalError {
  const described = issues.map((issue) => ({
    path: (issue.path ?? []).map((item) => String(item.key)).join("."),
    message: `expected ${issue.expected ?? "a valid value"}`,
  }));
  return new AnnalError(
    "ANNAL_ENDPOINT_INVALID_INPUT",
    `the request's ${target} is not what this endpoint accepts: ${described
      .map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
      .join("; ")}`,
    { details: { target, issues: described } },
  );
}
