import { type Clock, MOMENT_FORMS, readMoment } from "../time/index.ts";
import { BadUserInputError } from "./errors.ts";

/**
 * A moment argument (`at`, `since`) in the grammar of `src/time/`, as the REST channel and the
 * command line read it; undefined when it is left out. Anything else is `BAD_USER_INPUT`
 * with `message` (the product documents' `Invalid at`, `Invalid since filter`).
 */
export function momentArgument(
  value: unknown,
  clock: Clock,
  refusal: { readonly argument: string; readonly message: string },
): Date | undefined {
  if (value === undefined || value === null) return undefined;
  const reading = typeof value === "string" ? readMoment(value, clock) : undefined;
  if (reading?.moment === undefined) {
    throw new BadUserInputError(refusal.message, {
      argument: refusal.argument,
      hint: `${reading?.problem ?? "a moment is a string"}: write ${MOMENT_FORMS}`,
    });
  }
  return reading.moment;
}
