import { formatDateTime, ldapTimestamp } from "./dates.ts";
import { fieldset } from "./fieldset.ts";
import { ldapField } from "./ldap-field.ts";
import {
  ldapFind,
  ldapFindByAttribute,
  ldapFindByDn,
  ldapFindByEntryUuid,
  ldapFindById,
} from "./ldap-find.ts";
import { ldapSearch } from "./ldap-search.ts";
import { localizeLdapAttribute } from "./localize.ts";
import { ldapAdd, ldapDelete, ldapModify, ldapModifyDn } from "./mutations.ts";
import { resolveDn, resolveDnConnection } from "./resolve-dn.ts";
import { rest } from "./rest.ts";
import type { DirectiveCompiler } from "./site.ts";
import { alias, buffer, ensureArray, ensureBoolean, id, url } from "./values.ts";

/** Every field directive, by name. (`@ldapInput` belongs to input fields and is read there.) */
export const FIELD_DIRECTIVES: Readonly<Record<string, DirectiveCompiler>> = {
  alias,
  buffer,
  ensureArray,
  ensureBoolean,
  fieldset,
  formatDateTime,
  id,
  ldapField,
  ldapFind,
  ldapFindByAttribute,
  ldapFindByDn,
  ldapFindByEntryUuid,
  ldapFindById,
  ldapSearch,
  ldapTimestamp,
  localizeLdapAttribute,
  resolveDn,
  resolveDnConnection,
  url,
  ldapAdd,
  ldapModify,
  ldapModifyDn,
  ldapDelete,
  rest,
};

/** Directives that start a chain afresh (their value does not depend on one before them). */
export const MUTATION_DIRECTIVES = new Set(["ldapAdd", "ldapModify", "ldapModifyDn", "ldapDelete"]);

export { fieldReads, NOTHING, type DirectiveSite, type Step, type StepInput } from "./site.ts";
export { decodeId } from "./values.ts";
export { localize } from "./localize.ts";
export { parseGeneralizedTime } from "./dates.ts";
export { resolveKeywords } from "./rest.ts";
