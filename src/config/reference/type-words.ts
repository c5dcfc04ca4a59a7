import { z } from "zod";
import { unwrap } from "./unwrap.ts";

/** One value, or many (the items of a list or the values of a table). */
type Count = "one" | "many";

/**
 * What values of a schema are, in the words of someone writing `annal.toml`: `string`,
 * `whole number 1–65,535`, `"accesslog" or "poll"`, `list of strings`, `table of strings or
 * lists of strings`. A field's own `typeName` wins (`duration`, `path, relative to ...`).
 *
 * @throws Error for a kind of schema it has no words for, so that a new kind of option is
 *   given words rather than documented wrongly.
 */
export function typeWords(core: z.ZodType, meta: z.GlobalMeta, count: Count = "one"): string {
  if (meta.typeName !== undefined) {
    return count === "one" ? meta.typeName : `values of type: ${meta.typeName}`;
  }
  if (core instanceof z.ZodString) return count === "one" ? "string" : "strings";
  if (core instanceof z.ZodBoolean) return count === "one" ? "true or false" : "true or false";
  if (core instanceof z.ZodNumber) return numberWords(core, count);
  if (core instanceof z.ZodEnum) return choiceWords(core.options, count);
  if (core instanceof z.ZodLiteral) return choiceWords([...core.values], count);
  if (core instanceof z.ZodUnknown || core instanceof z.ZodAny) {
    return count === "one" ? "any value" : "any values";
  }
  if (core instanceof z.ZodObject) return count === "one" ? "table" : "tables";
  if (core instanceof z.ZodArray) {
    const items = itemWords(core.element as z.ZodType);
    return count === "one" ? `list of ${items}` : `lists of ${items}`;
  }
  if (core instanceof z.ZodRecord) {
    const values = itemWords(core.valueType as z.ZodType);
    return count === "one" ? `table of ${values}` : `tables of ${values}`;
  }
  if (core instanceof z.ZodUnion) {
    const options = core.options as readonly z.ZodType[];
    return options.map((option) => itemWords(option, count)).join(" or ");
  }
  throw new Error(`no words for a schema of type ${core._zod.def.type}`);
}

function itemWords(schema: z.ZodType, count: Count = "many"): string {
  const item = unwrap(schema);
  return typeWords(item.core, item.meta, count);
}

function numberWords(schema: z.ZodNumber, count: Count): string {
  const noun = (schema.isInt === true ? "whole number" : "number") + (count === "one" ? "" : "s");
  const min = schema.minValue ?? -Infinity;
  const max = schema.maxValue ?? Infinity;
  // A bound at the edge of what a number can hold is no bound a user needs to read.
  const hasMin = Number.isFinite(min) && min > Number.MIN_SAFE_INTEGER;
  const hasMax = Number.isFinite(max) && max < Number.MAX_SAFE_INTEGER;
  if (hasMin && hasMax) return `${noun} ${figure(min)}–${figure(max)}`;
  if (hasMin) return `${noun}, ${figure(min)} or more`;
  if (hasMax) return `${noun}, ${figure(max)} or less`;
  return noun;
}

function choiceWords(values: readonly unknown[], count: Count): string {
  const written = values.map((value) => JSON.stringify(value));
  if (count === "many") return `values from ${written.join(", ")}`;
  if (written.length === 1) return `${written[0]}`;
  if (written.length === 2) return `${written[0]} or ${written[1]}`;
  return `one of ${written.join(", ")}`;
}

function figure(value: number): string {
  return value.toLocaleString("en-US");
}
