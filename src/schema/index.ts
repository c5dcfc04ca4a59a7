/** Schemas a user gives annal (any Standard Schema), and turning them into JSON Schema. */
export {
  isStandardSchema,
  validate,
  type SchemaOutput,
  type StandardSchemaResult,
  type StandardSchemaV1,
  type Validated,
} from "./standard.ts";
export { jsonSchemaOf } from "./json-schema.ts";
