/**
 * The configuration schema read as a reference: every table and every key in it, with what a
 * user needs to write it. Read by walking the zod schemas themselves (their classes and `def`),
 * not from `z.toJSONSchema(..., { io: "input" })`, which drops the `.default()` of any schema
 * that transforms: every whole number here (`integer()` is a `z.preprocess`) would lose its
 * default and read as optional.
 */
import { z } from "zod";
import { formatKeyPath } from "../key-path.ts";
import { typeWords } from "./type-words.ts";
import { type Presence, type Unwrapped, unwrap } from "./unwrap.ts";

export interface KeyReference {
  /** The full key path: `directory.capture.interval`, `directory.types[].name`. */
  readonly path: string;
  /** The key as written in its table: `interval`. */
  readonly key: string;
  /** What its values are, in words: `whole number 1–65,535`, `duration`, `list of strings`. */
  readonly type: string;
  readonly presence: Presence;
  readonly description: string | undefined;
  /** A value as written in the file: the option's own `example`, else its default. */
  readonly example: unknown;
  /** The schema a value of this key must pass. */
  readonly schema: z.ZodType;
}

export interface TableReference {
  /** The full path: `directory`, `directory.types[]`, `graphql.types.<Type>`; `""` at the top. */
  readonly path: string;
  /** The TOML header: `[directory]`, `[[directory.types]]`, `[graphql.types.<Type>]`. */
  readonly header: string;
  /** The header with an example name where the path has a placeholder: `[graphql.types.Person]`. */
  readonly exampleHeader: string;
  /** `table`, or one of any number: `array` (`[[...]]`, in file order) or `record` (by name). */
  readonly kind: "table" | "array" | "record";
  readonly presence: Presence;
  readonly description: string | undefined;
  /** True when keys the schema does not name are allowed (and kept) rather than refused. */
  readonly open: boolean;
  readonly keys: readonly KeyReference[];
  /** The headers of the tables directly inside this one, in schema order. */
  readonly tables: readonly string[];
}

/** One step of a table's path: a key, and whether it holds one table or many. */
interface Step {
  readonly key: string;
  readonly kind: TableReference["kind"];
  /** `record` only: what the reference calls a name (`Type`) and an example of one. */
  readonly placeholder?: string;
  readonly exampleName?: string;
}

/** Every table of the schema, each before the tables inside it; the top level only if it has keys. */
export function describeTables(root: z.ZodType): TableReference[] {
  const top = unwrap(root);
  if (!(top.core instanceof z.ZodObject)) throw new Error("the configuration is not a table");
  const tables: TableReference[] = [];
  describeTable(top.core, [], top, tables);
  return tables.filter((table) => table.path !== "" || table.keys.length > 0);
}

function describeTable(
  object: z.ZodObject,
  steps: readonly Step[],
  outer: Unwrapped,
  tables: TableReference[],
): void {
  const keys: KeyReference[] = [];
  const inner: string[] = [];
  const table: TableReference = {
    path: tablePath(steps),
    header: header(steps, "placeholder"),
    exampleHeader: header(steps, "example"),
    kind: steps.at(-1)?.kind ?? "table",
    presence: outer.presence,
    description: outer.meta.description,
    open:
      object._zod.def.catchall !== undefined && !(object._zod.def.catchall instanceof z.ZodNever),
    keys,
    tables: inner,
  };
  tables.push(table);

  for (const [key, field] of Object.entries(object.shape as Record<string, z.ZodType>)) {
    const value = unwrap(field);
    const nested = tableIn(key, value);
    if (nested === undefined) {
      keys.push({
        path: tablePath([...steps, { key, kind: "table" }]),
        key,
        type: typeWords(value.core, value.meta),
        presence: value.presence,
        description: value.meta.description,
        example: value.meta.example ?? defaultOf(value.presence),
        schema: field,
      });
      continue;
    }
    const path = [...steps, nested.step];
    inner.push(header(path, "placeholder"));
    describeTable(nested.object, path, nested.outer, tables);
  }
}

/** The table(s) a key holds, or undefined when it holds a value. */
function tableIn(
  key: string,
  value: Unwrapped,
): { step: Step; object: z.ZodObject; outer: Unwrapped } | undefined {
  const { core } = value;
  if (core instanceof z.ZodObject)
    return { step: { key, kind: "table" }, object: core, outer: value };
  if (core instanceof z.ZodArray) {
    const item = unwrap(core.element as z.ZodType);
    if (!(item.core instanceof z.ZodObject)) return undefined;
    return { step: { key, kind: "array" }, object: item.core, outer: withMeta(value, item) };
  }
  if (core instanceof z.ZodRecord) {
    const item = unwrap(core.valueType as z.ZodType);
    if (!(item.core instanceof z.ZodObject)) return undefined;
    const name = unwrap(core.keyType as z.ZodType).meta;
    const step: Step = {
      key,
      kind: "record",
      placeholder: name.title ?? "name",
      exampleName: typeof name.example === "string" ? name.example : undefined,
    };
    return { step, object: item.core, outer: withMeta(value, item) };
  }
  return undefined;
}

/** The many tables' own metadata, with the item's where the list or record says nothing. */
function withMeta(many: Unwrapped, item: Unwrapped): Unwrapped {
  return { ...many, meta: { ...item.meta, ...many.meta } };
}

function tablePath(steps: readonly Step[]): string {
  return steps
    .map((step) => {
      const key = formatKeyPath([step.key]);
      if (step.kind === "array") return `${key}[]`;
      if (step.kind === "record") return `${key}.<${step.placeholder}>`;
      return key;
    })
    .join(".");
}

function header(steps: readonly Step[], names: "placeholder" | "example"): string {
  if (steps.length === 0) return "";
  const path = steps
    .map((step) => {
      const key = formatKeyPath([step.key]);
      if (step.kind !== "record") return key;
      const name =
        names === "placeholder"
          ? `<${step.placeholder}>`
          : formatKeyPath([step.exampleName ?? step.placeholder ?? "name"]);
      return `${key}.${name}`;
    })
    .join(".");
  return steps.at(-1)?.kind === "array" ? `[[${path}]]` : `[${path}]`;
}

function defaultOf(presence: Presence): unknown {
  return presence.kind === "default" ? presence.value : undefined;
}
