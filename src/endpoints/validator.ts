import { vValidator as honoValibot } from "@hono/valibot-validator";
import type { BaseIssue } from "valibot";
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
  honoValibot(
    target,
    schema,
    hook ??
      (((result: { success: boolean; issues?: readonly BaseIssue<unknown>[] }) => {
        if (!result.success) throw invalidInput(target, result.issues ?? []);
      }) as unknown as NonNullable<typeof hook>),
  )) as typeof honoValibot;

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
