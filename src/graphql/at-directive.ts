import {
  getDirectiveValues,
  GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { AnnalError } from "../errors/index.ts";
import { type Clock, MOMENT_FORMS, readMoment } from "../time/index.ts";

/**
 * The moment an operation asks for with `@at(moment:)`, read in the grammar of `src/time/` on
 * `clock` as the REST channel reads `at`; undefined without the directive. A moment that does
 * not read is refused before any field runs, with the REST channel's code
 * (`ANNAL_PARAMETER_INVALID`, `extensions.code` BAD_USER_INPUT).
 *
 * @example
 * momentOfOperation(schema, operation, variables, clock); // query @at(moment: "yesterday") { ... }
 */
export function momentOfOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode | undefined,
  variables: Record<string, unknown> | undefined,
  clock: Clock,
): Date | undefined {
  const directive = schema.getDirective("at");
  if (operation === undefined || !directive) return undefined;
  const args = getDirectiveValues(directive, operation, variables ?? {});
  if (args === undefined) return undefined;
  const text = typeof args.moment === "string" ? args.moment : "";
  const reading = readMoment(text, clock);
  if (reading.moment !== undefined) return reading.moment;
  const refusal = new AnnalError("ANNAL_PARAMETER_INVALID", `at: ${reading.problem}`, {
    hint: `write ${MOMENT_FORMS}`,
    details: { parameter: "at", expected: MOMENT_FORMS },
  });
  throw new GraphQLError(refusal.message, { originalError: refusal });
}
