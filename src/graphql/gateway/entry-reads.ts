import {
  isInterfaceType,
  isObjectType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import type { FieldReads } from "../context.ts";

/** The attributes a request reads entries with; `binaryAttributes` come as bytes. */
export interface Reads {
  readonly attributes: readonly string[];
  readonly binaryAttributes: readonly string[];
}

/**
 * Which attributes a request reads entries with: those of the fields its query selects, not
 * every attribute the schema names. A page of people asked for their names should not bring
 * every person's photo and every group's member list over the wire and through the LDAP
 * decoder. Always read: `always` (objectClass, the identity's attributes and what tells an
 * entry's type).
 * Mutations, and queries that select a field that may read any attribute (`@alias` through
 * another field, `@fieldset`), read every attribute, as do fields that read an attribute of
 * their own name without naming it (a transforming directive first in the chain). Worked out
 * once per parsed document: the searches and lookups of one request all read the same
 * attributes, so an entry a search primes the lookups with is the entry a lookup would read.
 *
 * @example
 * const reads = new EntryReads({ schema, always, fields, attributes, binaryAttributes });
 * reads.of(document, operation); // { attributes: ["objectClass", "entryUUID", "uid", ...], ... }
 */
export class EntryReads {
  readonly #schema: GraphQLSchema;
  readonly #always: ReadonlyMap<string, string>;
  readonly #alwaysBinary: ReadonlyMap<string, string>;
  readonly #fields: ReadonlyMap<GraphQLField<unknown, unknown>, FieldReads>;
  readonly #everything: Reads;
  readonly #byDocument = new WeakMap<DocumentNode, Reads>();

  /**
   * `attributes` and `binaryAttributes` are every attribute the schema names, by lower-case
   * name; `always` those read whatever is selected (`alwaysBinary` of them as bytes); `fields`
   * what each field with directives reads (a field with directives but no entry of its own
   * here reads nothing but its name).
   */
  constructor(options: {
    readonly schema: GraphQLSchema;
    readonly always: ReadonlyMap<string, string>;
    readonly alwaysBinary?: ReadonlyMap<string, string>;
    readonly fields: ReadonlyMap<GraphQLField<unknown, unknown>, FieldReads>;
    readonly attributes: ReadonlyMap<string, string>;
    readonly binaryAttributes: ReadonlyMap<string, string>;
  }) {
    const { attributes, binaryAttributes } = options;
    this.#schema = options.schema;
    this.#always = options.always;
    this.#alwaysBinary = options.alwaysBinary ?? new Map();
    this.#fields = options.fields;
    this.#everything = {
      attributes: [...attributes.values()],
      binaryAttributes: [...binaryAttributes.values()],
    };
    // A directive that transforms the field's own value, first in its chain, reads the
    // attribute of the field's name; it is read when the schema reads it for another field.
    for (const [field, reads] of options.fields) {
      const key = field.name.toLowerCase();
      const name = attributes.get(key);
      if (name !== undefined && !reads.attributes.has(key)) reads.attributes.set(key, name);
      const binary = binaryAttributes.get(key);
      if (binary !== undefined && !reads.binaryAttributes.has(key)) {
        reads.binaryAttributes.set(key, binary);
      }
    }
  }

  /** Every attribute the schema names: what a request whose reads cannot be foreseen reads. */
  get everything(): Reads {
    return this.#everything;
  }

  /** The attributes `operation` of `document` (a validated document) reads entries with. */
  of(document: DocumentNode, operation: OperationDefinitionNode | undefined): Reads {
    if (operation?.operation !== "query") return this.#everything;
    let reads = this.#byDocument.get(document);
    if (reads === undefined) {
      reads = this.#collect(document);
      this.#byDocument.set(document, reads);
    }
    return reads;
  }

  /** The union over every field the document names, in any of its operations and fragments. */
  #collect(document: DocumentNode): Reads {
    const attributes = new Map(this.#always);
    const binaryAttributes = new Map(this.#alwaysBinary);
    let every = false;
    const typeInfo = new TypeInfo(this.#schema);
    visit(
      document,
      visitWithTypeInfo(typeInfo, {
        [Kind.OPERATION_DEFINITION]: (node) => {
          if (node.operation !== "query") every = true;
        },
        [Kind.FIELD]: (node) => {
          const parent = typeInfo.getParentType();
          const name = node.name.value;
          // An interface's field resolves as each implementing type's own field does.
          const owners = isObjectType(parent)
            ? [parent]
            : isInterfaceType(parent)
              ? this.#schema.getPossibleTypes(parent)
              : [];
          for (const owner of owners) {
            const field = owner.getFields()[name];
            const reads = field === undefined ? undefined : this.#fields.get(field);
            if (reads === undefined) continue;
            if (reads.every) every = true;
            for (const [key, value] of reads.attributes) attributes.set(key, value);
            for (const [key, value] of reads.binaryAttributes) binaryAttributes.set(key, value);
          }
        },
      }),
    );
    if (every) return this.#everything;
    return {
      attributes: [...attributes.values()],
      binaryAttributes: [...binaryAttributes.values()],
    };
  }
}
