import { Kind, type GraphQLInputField } from "graphql";

/** The attribute an input field maps to: `@ldapInput(attribute:)`, or the field's name. */
export function inputAttribute(field: GraphQLInputField): string {
  const directive = field.astNode?.directives?.find((node) => node.name.value === "ldapInput");
  const argument = directive?.arguments?.find((node) => node.name.value === "attribute");
  if (argument?.value.kind === Kind.STRING) return argument.value.value;
  return field.name;
}
