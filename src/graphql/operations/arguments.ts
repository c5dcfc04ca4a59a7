import { UUID } from "../../history/index.ts";
import { BadUserInputError } from "../errors.ts";

// The messages are the product documents': `Invalid <field>`, `Invalid <name> filter`.

export const DEFINITION_NAME = /^[A-Za-z][A-Za-z0-9._-]{0,99}$/;
export const DIALOG_ID = /^[0-9a-f-]{36}\.\d{1,9}$/;

/** An instance id argument, in lower case. */
export function instanceIdArg(value: unknown, field = "id"): string {
  if (typeof value !== "string" || !UUID.test(value)) {
    throw new BadUserInputError(`Invalid ${field}`, {
      argument: field,
      hint: "an instance id is a UUID, as startWorkflow and instances return it",
    });
  }
  return value.toLowerCase();
}

/** A text filter argument that must match `pattern`; undefined when left out. */
export function textFilter(value: unknown, name: string, pattern: RegExp): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !pattern.test(value)) {
    throw new BadUserInputError(`Invalid ${name} filter`, { argument: name });
  }
  return value;
}

/** `{ [key]: value }`, or nothing when the value is undefined. */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
