import pluralize from "pluralize";
import { AnnalError } from "../errors/index.ts";

/** Every name the REST channel and its OpenAPI description derive from one configured type. */
export interface TypeNames {
  /** As configured: `user`. */
  readonly name: string;
  /** The REST path segment, the plural: `users` in `/api/entries/users`. */
  readonly path: string;
  /** The name in components: sanitised, reserved words suffixed (`class` → `class_type`). */
  readonly token: string;
  readonly operations: {
    readonly search: string; // searchUsers
    readonly lookup: string; // lookupUser
    readonly changes: string; // getUserChanges
    readonly memberships: string; // getUserMemberships
  };
  readonly components: {
    readonly entry: string; // Entry_user
    readonly searchResponse: string; // SearchResponse_user
  };
}

/**
 * Words that code generators cannot use as identifiers: the reserved words of JavaScript and
 * TypeScript, Java and Python, compared ignoring case. A type token that is one gets `_type`.
 */
const RESERVED = new Set(
  `abstract and any as assert async await boolean break byte case catch char class const continue
   debugger declare def default del delete do double elif else enum except export extends false
   final finally float for from function global goto if implements import in instanceof int
   interface is lambda let long module namespace native new none nonlocal not null number object
   or package pass private protected public raise return short static strictfp string super
   switch symbol synchronized this throw throws transient true try type typeof var void volatile
   while with yield`.split(/\s+/),
);

/** `my-type` → `my_type`: what `^[A-Za-z][A-Za-z0-9_]*$` allows. */
function sanitise(name: string): string {
  const replaced = name.replace(/[^A-Za-z0-9_]/g, "_");
  return /^[A-Za-z]/.test(replaced) ? replaced : `t_${replaced}`;
}

/** `my-types` → `MyTypes`, for operationIds after a verb. */
function pascal(name: string): string {
  return sanitise(name)
    .split("_")
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("");
}

/** The names of one type, before collisions are checked (see `checkTypeNames`). */
export function typeNamesOf(name: string): TypeNames {
  const plural = pluralize.plural(name);
  const singular = pluralize.singular(name);
  const sanitised = sanitise(name);
  const token = RESERVED.has(sanitised.toLowerCase()) ? `${sanitised}_type` : sanitised;
  return {
    name,
    path: plural,
    token,
    operations: {
      search: `search${pascal(plural)}`,
      lookup: `lookup${pascal(singular)}`,
      changes: `get${pascal(singular)}Changes`,
      memberships: `get${pascal(singular)}Memberships`,
    },
    components: { entry: `Entry_${token}`, searchResponse: `SearchResponse_${token}` },
  };
}

/** Two configured types would share a REST path, an operationId or a component name. */
export class TypeNameCollisionError extends AnnalError {
  readonly types: readonly [string, string];
  /** The name both would take. */
  readonly collidingName: string;

  constructor(first: string, second: string, what: string, collidingName: string) {
    super(
      "ANNAL_TYPE_NAME_COLLISION",
      `the entry types "${first}" and "${second}" both become the ${what} ${collidingName}`,
      {
        hint: "rename one of them in [[directory.types]]: names are compared after singular/plural normalisation and after reducing them to letters, digits and _",
      },
    );
    this.types = [first, second];
    this.collidingName = collidingName;
  }
}

/**
 * Derives every type's names and fails when two collide, in any of: the REST path (`user` and
 * `users` are both `/api/entries/users`), an operationId, a component name (`my-type` and
 * `my_type` are both `Entry_my_type`). Names are compared ignoring case, as code generators
 * and case-insensitive file systems would. Call it before the server listens: a collision must
 * stop start-up before any traffic.
 *
 * @example
 * checkTypeNames([{ name: "user" }, { name: "group" }]).map((t) => t.path); // ["users", "groups"]
 * checkTypeNames([{ name: "user" }, { name: "users" }]); // throws ANNAL_TYPE_NAME_COLLISION
 * @throws TypeNameCollisionError `ANNAL_TYPE_NAME_COLLISION`, naming both types and the name.
 */
export function checkTypeNames(types: readonly { readonly name: string }[]): TypeNames[] {
  const all = types.map((type) => typeNamesOf(type.name));
  const seen = new Map<string, { type: string; what: string; name: string }>();
  for (const names of all) {
    const claims: [string, string][] = [
      ["REST path", `/api/entries/${names.path}`],
      ["operationId", names.operations.search],
      ["operationId", names.operations.lookup],
      ["operationId", names.operations.changes],
      ["operationId", names.operations.memberships],
      ["component name", names.components.entry],
      ["component name", names.components.searchResponse],
    ];
    const own = new Set<string>();
    for (const [what, name] of claims) {
      const key = name.toLowerCase();
      const earlier = seen.get(key);
      if (earlier && earlier.type !== names.name) {
        throw new TypeNameCollisionError(earlier.type, names.name, what, name);
      }
      if (!own.has(key)) seen.set(key, { type: names.name, what, name });
      own.add(key);
    }
  }
  return all;
}
