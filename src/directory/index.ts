/**
 * LDAP access: a pooled client over ldapts (in the clear, `ldaps://` or StartTLS), DNs (RFC 4514)
 * and filters (RFC 4515).
 * Change capture lives beside this and uses the same client.
 */
export {
  createDirectoryClient,
  DirectoryClient,
  type DirectoryClientOptions,
  type ModifyDNOptions,
  type OperationOptions,
  type ReadOptions,
  type ExtensibleMatch,
  type SearchOptions,
} from "./client.ts";
export type { DirectoryTlsOptions } from "./transport.ts";
export {
  escapeDNValue,
  formatDN,
  formatRDN,
  InvalidDNError,
  parseDN,
  type AttributeTypeAndValue,
  type DN,
  type RDN,
} from "./dn-syntax.ts";
export { dnEquals, isDescendantOf, normalizeDN, parentDN, rdnOf } from "./dn-compare.ts";
export type { AttributeValues, DirectoryEntry, Modification } from "./entry.ts";
export { DirectoryError, type DirectoryOperation } from "./errors.ts";
export {
  and,
  approx,
  assertAttributeName,
  eq,
  eqBytes,
  escapeFilterValue,
  ge,
  InvalidFilterAttributeError,
  InvalidFilterValueError,
  le,
  not,
  or,
  present,
  renderFilter,
  substring,
} from "./filter.ts";
export {
  canonicalIdentity,
  entryIdentity,
  guidText,
  IDENTITY_ATTRIBUTES,
  identityAttributes,
  identityFilter,
  type IdentityAttribute,
  type IdentitySetting,
} from "./identity.ts";
export {
  filterAsStored,
  guidBytes,
  type ShownAs,
  shownText,
  sidBytes,
  sidText,
  storedFromShown,
} from "./shown-values.ts";
export { ProxiedAuthorizationControl } from "./proxied-authorization.ts";
export { matchesFilter } from "./match.ts";
export {
  DirectorySchema,
  loadDirectorySchema,
  parseSubschema,
  type AttributeType,
  type ObjectClass,
} from "./schema.ts";
