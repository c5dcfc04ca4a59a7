import { z } from "zod";
import type { StandardSchemaV1 } from "./standard.ts";

/**
 * The JSON Schema of a schema, for a form that asks for a value of it (a dialog's answer, a
 * workflow's parameters), or null when it cannot be told. A schema that carries its own
 * (`~standard.jsonSchema`, Standard JSON Schema) is asked first; a zod 4 schema is converted;
 * anything else has none (the web application then asks for JSON).
 */
export function jsonSchemaOf(schema: StandardSchemaV1 | undefined): unknown {
  if (!schema) return null;
  const standard = schema["~standard"] as StandardSchemaV1["~standard"] & {
    jsonSchema?: { input?: (options: { target: string }) => unknown };
  };
  try {
    if (typeof standard.jsonSchema?.input === "function") {
      return standard.jsonSchema.input({ target: "draft-2020-12" });
    }
    if (standard.vendor === "zod" && schema instanceof z.ZodType) {
      return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
    }
  } catch {
    // A schema that cannot be represented (a transform, a custom check): no form.
  }
  return null;
}
