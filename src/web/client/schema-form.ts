import { h } from "./dom.ts";
import { entryPicker } from "./entry-picker.ts";

/** The part of JSON Schema a generated form understands; anything else gets a JSON field. */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly title?: string;
  readonly description?: string;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly default?: unknown;
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly anyOf?: readonly JsonSchema[];
  /**
   * annal's own keyword: the field names a directory entry of this type (`"group"`), and is
   * filled with a picker that searches the directory as the person types. In zod:
   * `z.string().meta({ title: "Group", "x-annal-entry": "group" })`.
   */
  readonly "x-annal-entry"?: string;
}

/** A generated form: its fields, and how to read the value they hold. */
export interface SchemaForm {
  readonly element: HTMLElement;
  /** The value the fields hold, shaped as the schema says; throws on unreadable JSON. */
  value(): unknown;
}

let counter = 0;
const fieldId = (name: string) => `f${++counter}-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;

const typeOf = (schema: JsonSchema): string | undefined => {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null");
  if (typeof schema.type === "string") return schema.type;
  if (schema.properties) return "object";
  if (schema.enum) return "enum";
  // z.optional and nullable forms come as anyOf [{...}, {type: "null"}]
  const single = schema.anyOf?.filter((s) => s.type !== "null");
  return single?.length === 1 ? typeOf(single[0]!) : undefined;
};

const unwrap = (schema: JsonSchema): JsonSchema => {
  const single = schema.anyOf?.filter((s) => s.type !== "null");
  return !schema.type && single?.length === 1 ? { ...single[0]!, ...schema, anyOf: [] } : schema;
};

function labelText(name: string, schema: JsonSchema, required: boolean): (string | HTMLElement)[] {
  return [
    schema.title ?? name,
    required ? h("span", { class: "required", "aria-hidden": "true" }, " *") : "",
  ];
}

function hintOf(id: string, schema: JsonSchema): HTMLElement | null {
  return schema.description
    ? h("p", { class: "hint", id: `${id}-hint` }, schema.description)
    : null;
}

/** One field for `schema` named `name`; returns its element and its value reader. */
function field(
  name: string,
  raw: JsonSchema,
  required: boolean,
): { element: HTMLElement; value(): unknown } {
  const schema = unwrap(raw);
  const id = fieldId(name);
  const described = schema.description ? `${id}-hint` : null;
  const type = typeOf(schema);

  if (type === "object" && schema.properties) {
    const inner = objectFields(schema);
    return {
      element: h(
        "fieldset",
        null,
        h("legend", null, ...labelText(name, schema, required)),
        hintOf(id, schema),
        inner.element,
      ),
      value: inner.value,
    };
  }
  if (schema.enum) {
    const select = h(
      "select",
      { id, name, required, "aria-describedby": described },
      required ? null : h("option", { value: "" }, "—"),
      ...schema.enum.map((option, index) => h("option", { value: String(index) }, String(option))),
    );
    return {
      element: h(
        "div",
        { class: "field" },
        h("label", { for: id }, ...labelText(name, schema, required)),
        select,
        hintOf(id, schema),
      ),
      value: () => (select.value === "" ? undefined : schema.enum![Number(select.value)]),
    };
  }
  if (type === "boolean") {
    const box = h("input", {
      id,
      name,
      type: "checkbox",
      checked: schema.default === true,
      "aria-describedby": described,
    });
    return {
      element: h(
        "div",
        { class: "field checkbox" },
        box,
        h("label", { for: id }, schema.title ?? name),
        hintOf(id, schema),
      ),
      value: () => box.checked,
    };
  }
  if (type === "integer" || type === "number") {
    const min = schema.minimum ?? schema.exclusiveMinimum;
    const max = schema.maximum ?? schema.exclusiveMaximum;
    const input = h("input", {
      id,
      name,
      type: "number",
      required,
      step: type === "integer" ? 1 : "any",
      min,
      max,
      value: typeof schema.default === "number" ? schema.default : null,
      "aria-describedby": described,
    });
    return {
      element: h(
        "div",
        { class: "field" },
        h("label", { for: id }, ...labelText(name, schema, required)),
        input,
        hintOf(id, schema),
      ),
      value: () => (input.value === "" ? undefined : Number(input.value)),
    };
  }
  if (type === "string" && typeof schema["x-annal-entry"] === "string") {
    const picker = entryPicker({
      id,
      name,
      entryType: schema["x-annal-entry"],
      required,
      describedBy: described,
    });
    return {
      element: h(
        "div",
        { class: "field" },
        h("label", { for: id }, ...labelText(name, schema, required)),
        picker.element,
        hintOf(id, schema),
      ),
      value: picker.value,
    };
  }
  if (type === "string") {
    const long = (schema.maxLength ?? 0) > 200 || schema.format === "textarea";
    const inputType =
      schema.format === "date-time"
        ? "datetime-local"
        : schema.format === "date"
          ? "date"
          : schema.format === "email"
            ? "email"
            : schema.format === "uri"
              ? "url"
              : "text";
    const attributes = {
      id,
      name,
      required,
      minlength: schema.minLength,
      maxlength: schema.maxLength,
      pattern: schema.pattern,
      "aria-describedby": described,
    };
    const input = long
      ? h("textarea", { ...attributes, rows: 4 })
      : h("input", {
          ...attributes,
          type: inputType,
          value: typeof schema.default === "string" ? schema.default : null,
          step: inputType === "datetime-local" ? 1 : null,
        });
    return {
      element: h(
        "div",
        { class: "field" },
        h("label", { for: id }, ...labelText(name, schema, required)),
        input,
        hintOf(id, schema),
      ),
      value: () => {
        if (input.value === "") return undefined;
        return inputType === "datetime-local" ? new Date(input.value).toISOString() : input.value;
      },
    };
  }
  if (
    type === "array" &&
    schema.items &&
    ["string", "integer", "number"].includes(typeOf(schema.items) ?? "")
  ) {
    const area = h("textarea", { id, name, rows: 3, required, "aria-describedby": `${id}-each` });
    const numeric = typeOf(schema.items) !== "string";
    return {
      element: h(
        "div",
        { class: "field" },
        h("label", { for: id }, ...labelText(name, schema, required)),
        area,
        h(
          "p",
          { class: "hint", id: `${id}-each` },
          schema.description ? `${schema.description} ` : "",
          "One value a line.",
        ),
      ),
      value: () => {
        const lines = area.value
          .split("\n")
          .map((line) => line.trim())
          .filter(Boolean);
        return numeric ? lines.map(Number) : lines;
      },
    };
  }
  // Anything else is written as JSON.
  const area = h("textarea", {
    id,
    name,
    rows: 4,
    required,
    class: "code",
    "aria-describedby": `${id}-json`,
  });
  if (schema.default !== undefined) area.value = JSON.stringify(schema.default, null, 2);
  return {
    element: h(
      "div",
      { class: "field" },
      h("label", { for: id }, ...labelText(name, schema, required)),
      area,
      h(
        "p",
        { class: "hint", id: `${id}-json` },
        schema.description ? `${schema.description} ` : "",
        "As JSON.",
      ),
    ),
    value: () => {
      if (area.value.trim() === "") return undefined;
      try {
        return JSON.parse(area.value) as unknown;
      } catch {
        throw new Error(`${schema.title ?? name}: not valid JSON`);
      }
    },
  };
}

function objectFields(schema: JsonSchema): { element: HTMLElement; value(): unknown } {
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(
    ([name, property]) => [name, field(name, property, required.has(name))] as const,
  );
  return {
    element: h("div", { class: "fields" }, ...fields.map(([, f]) => f.element)),
    value: () => {
      const value: Record<string, unknown> = {};
      for (const [name, f] of fields) {
        const v = f.value();
        if (v !== undefined) value[name] = v;
      }
      return value;
    },
  };
}

/**
 * A form's fields generated from a JSON Schema (a dialog's answer, a workflow's parameters):
 * an object's properties become labelled fields (text, number, checkbox, select for `enum`,
 * a list for arrays of text, a fieldset for nested objects), required ones marked and
 * checked by the browser; anything else is a JSON field.
 */
export function schemaForm(schema: JsonSchema | null | undefined): SchemaForm {
  if (!schema || (typeOf(schema) === "object" && !schema.properties)) {
    return { element: h("p", { class: "hint" }, "Nothing to fill in."), value: () => ({}) };
  }
  if (typeOf(schema) === "object") return objectFields(schema);
  return field("value", schema, true);
}
