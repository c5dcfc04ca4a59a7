import {
  getNamedType,
  isObjectType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from "graphql";
import { hasAccess } from "../../auth/index.ts";
import { AnnalError } from "../../errors/index.ts";
import type { Viewer } from "../context.ts";

/**
 * Whether a field of an entry type answers only what identifies the entry: its DN
 * (`@ldapField(attribute: "dn")`) or its internal ID (`@id` first and alone, from entryUUID).
 */
function identifies(field: GraphQLField<unknown, unknown>): boolean {
  const directives = field.astNode?.directives ?? [];
  if (directives.length !== 1) return false;
  const [directive] = directives;
  if (directive!.name.value === "id") return true;
  if (directive!.name.value !== "ldapField") return false;
  const attribute = directive!.arguments?.find((arg) => arg.name.value === "attribute")?.value;
  const name =
    attribute?.kind === Kind.STRING ? attribute.value.toLowerCase() : field.name.toLowerCase();
  const fallbacks = directive!.arguments?.some((arg) => arg.name.value === "fallbackAttributes");
  return !fallbacks && (name === "dn" || name === "entrydn");
}

/** The names of the fields a selection asks for, through its fragments. */
function selectedFields(
  selectionSet: SelectionSetNode | undefined,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
  names: Set<string>,
): Set<string> {
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) names.add(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT)
      selectedFields(selection.selectionSet, fragments, names);
    else selectedFields(fragments[selection.name.value]?.selectionSet, fragments, names);
  }
  return names;
}

/**
 * The check a directory mutation runs before it writes: a caller without `read` may select
 * of its answer only what identifies the entry written (its `dn`, its `id`, `__typename`);
 * a selection that asks for more is refused with `ANNAL_FORBIDDEN` (FORBIDDEN) and nothing
 * is written. With `read`, the answer is read like any query's.
 *
 * Refusing before the write, rather than answering null fields after it, keeps a caller from
 * making a change it cannot see the answer of, and keeps "nothing changes" for every refusal.
 */
export function answerAccess(
  field: GraphQLField<unknown, unknown>,
): (viewer: Viewer, info: GraphQLResolveInfo) => void {
  const named = getNamedType(field.type);
  const allowed = new Set(["__typename"]);
  if (isObjectType(named)) {
    for (const member of Object.values((named as GraphQLObjectType).getFields())) {
      if (identifies(member)) allowed.add(member.name);
    }
  }
  return (viewer, info) => {
    if (hasAccess(viewer, "read")) return;
    const names = new Set<string>();
    for (const node of info.fieldNodes) selectedFields(node.selectionSet, info.fragments, names);
    const refused = [...names].filter((name) => !allowed.has(name));
    if (refused.length === 0) return;
    const identifying = [...allowed].filter((name) => name !== "__typename");
    throw new AnnalError(
      "ANNAL_FORBIDDEN",
      `without the access function "read", the answer of ${field.name} may select only what identifies the entry (${identifying.join(", ") || "__typename"}); it selects ${refused.join(", ")}`,
      {
        status: 403,
        hint: `select only ${identifying.join(" or ") || "__typename"}, or ask for the access function "read"`,
        details: { fields: refused },
      },
    );
  };
}
