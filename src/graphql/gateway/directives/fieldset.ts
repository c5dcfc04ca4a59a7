import {
  getNamedType,
  isAbstractType,
  isEnumType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from "graphql";
import type { DirectiveEnvironment } from "../../context.ts";
import { isEntry } from "../entry.ts";
import { withFallback } from "../i18n.ts";
import {
  fieldArgument,
  needEveryAttribute,
  resolveField,
  siteError,
  type DirectiveCompiler,
  type DirectiveSite,
  type StepInput,
} from "./site.ts";

/** A resolved fieldset, as the `Fieldset` type serves it. */
export interface FieldsetValue {
  readonly label: string;
  readonly description: string | null;
  readonly fields: readonly FieldsetEntryValue[];
}

interface FieldsetEntryValue {
  readonly name: string;
  readonly label: string;
  readonly description: string | null;
  readonly type: string;
  readonly value: unknown;
  readonly fieldset: FieldsetValue | null;
}

type Kind = "scalar" | "labeled" | "fieldset";

function kindOf(schema: GraphQLSchema, field: GraphQLField<unknown, unknown>): Kind | undefined {
  const named = getNamedType(field.type);
  if (named.name === "Fieldset") return "fieldset";
  if (isScalarType(named) || isEnumType(named)) return "scalar";
  const labeled = schema.getType("Labeled");
  if (isInterfaceType(labeled)) {
    if (named === labeled) return "labeled";
    if (isObjectType(named) && named.getInterfaces().includes(labeled)) return "labeled";
    if (
      isAbstractType(named) &&
      schema.getPossibleTypes(named).every((t) => t.getInterfaces().includes(labeled))
    ) {
      return "labeled";
    }
  }
  return undefined;
}

/** Fieldsets that contain themselves, directly or through others, are refused at build. */
function checkCycles(site: DirectiveSite, names: readonly string[]): void {
  const fields = site.owner.getFields();
  const visit = (path: readonly string[], members: readonly string[]): void => {
    for (const member of members) {
      if (path.includes(member)) {
        throw siteError(site, `fieldsets contain each other: ${[...path, member].join(" → ")}`);
      }
      const directive = fields[member]?.astNode?.directives?.find(
        (d) => d.name.value === "fieldset",
      );
      const list = directive?.arguments?.find((a) => a.name.value === "fields")?.value;
      if (list?.kind === "ListValue") {
        visit(
          [...path, member],
          list.values.flatMap((v) => (v.kind === "StringValue" ? [v.value] : [])),
        );
      }
    }
  };
  visit([site.field.name], names);
}

/**
 * `@fieldset(fields)`: the fields, their values, and labels and descriptions looked up in the
 * translations (namespaces `fieldset` then `common`) in the order of the product documents'
 * table, for the languages of a `locale` argument or `Accept-Language`, then the fallback.
 */
export const fieldset: DirectiveCompiler = (site) => {
  if (getNamedType(site.field.type).name !== "Fieldset") {
    throw siteError(site, "the field's type must be Fieldset");
  }
  const names = Array.isArray(site.args.fields) ? (site.args.fields as string[]) : [];
  if (names.length === 0) throw siteError(site, "fields names no field");
  const own = site.owner.getFields();
  const kinds = new Map<string, Kind>();
  for (const name of names) {
    const field = own[name];
    if (field === undefined) throw siteError(site, `${site.owner.name} has no field ${name}`);
    const kind = kindOf(site.environment.schema, field);
    if (kind === undefined) {
      throw siteError(
        site,
        `${site.owner.name}.${name} is of type ${String(field.type)}: a fieldset holds scalars, Labeled types and fieldsets`,
      );
    }
    kinds.set(name, kind);
  }
  checkCycles(site, names);
  // It resolves its fields (and their labels, of other types) as GraphQL would.
  needEveryAttribute(site);
  const typeName = site.owner.name;
  const set = site.field.name;
  const { environment } = site;
  return async (input) => {
    const asked = fieldArgument(input, "locale");
    const requested = Array.isArray(asked)
      ? asked.map(String)
      : typeof asked === "string"
        ? [asked]
        : input.context.languages;
    const languages = withFallback(requested, environment.fallbackLanguage);
    const t = (keys: string[]) => environment.translations.lookup(languages, keys);
    const fields = await Promise.all(
      names.map(async (name): Promise<FieldsetEntryValue> => {
        const field = own[name]!;
        const localeArgument =
          field.args.some((arg) => arg.name === "locale") && asked !== undefined;
        const value = await resolveField(
          site.owner,
          name,
          input.parent,
          input,
          localeArgument ? { locale: asked } : {},
        );
        const kind = kinds.get(name)!;
        return {
          name,
          label:
            t([
              `${typeName}.${set}.${name}.label`,
              `${typeName}.${name}.label`,
              `${set}.${name}.label`,
              `${name}.label`,
              `${typeName}.${set}.${name}`,
              `${typeName}.${name}`,
              `${set}.${name}`,
              name,
            ]) ?? name,
          description:
            t([
              `${typeName}.${set}.${name}.description`,
              `${typeName}.${name}.description`,
              `${set}.${name}.description`,
              `${name}.description`,
            ]) ?? null,
          type: String(field.type),
          value:
            kind === "labeled"
              ? await labelsOf(environment, getNamedType(field.type), value, input)
              : (value ?? null),
          fieldset: kind === "fieldset" ? ((value ?? null) as FieldsetValue | null) : null,
        };
      }),
    );
    return {
      label: t([`${typeName}.${set}.label`, `${set}.label`, `${typeName}.${set}`, set]) ?? set,
      description: t([`${typeName}.${set}.description`, `${set}.description`]) ?? null,
      fields,
    } satisfies FieldsetValue;
  };
};

/** A Labeled value shown by its `label` field (each item of a list). */
async function labelsOf(
  environment: DirectiveEnvironment,
  type: GraphQLNamedType,
  value: unknown,
  input: StepInput,
): Promise<unknown> {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value))
    return Promise.all(value.map((item) => labelsOf(environment, type, item, input)));
  const concrete = concreteType(environment, type, value);
  if (concrete === undefined) return null;
  return (await resolveField(concrete, "label", value, input)) ?? null;
}

function concreteType(
  { schema, entryTypes }: DirectiveEnvironment,
  type: GraphQLNamedType,
  value: unknown,
): GraphQLObjectType | undefined {
  if (isObjectType(type)) return type;
  if (!isAbstractType(type)) return undefined;
  const candidates = schema.getPossibleTypes(type).map((member) => member.name);
  const name = isEntry(value)
    ? (value.typeName ?? entryTypes.infer(value, candidates))
    : (value as { __typename?: string }).__typename;
  const found = name === undefined ? undefined : schema.getType(name);
  return isObjectType(found) ? found : undefined;
}
