import type { DocumentNode, GraphQLError, GraphQLSchema, ValidationRule } from "graphql";
import { validateCoded } from "./limits.ts";

/** Characters of source text the cache holds at most (the documents parsed from them besides). */
const DEFAULT_BUDGET = 4_000_000;

interface Cached {
  readonly document: DocumentNode;
  /** The schema the document passed the fixed rules against; undefined until checked. */
  validFor: GraphQLSchema | undefined;
}

/**
 * Parsing and validation, each done once per distinct document text: clients send the same
 * few queries over and over, and parsing and validating one costs more than resolving a small
 * answer. Only what the text alone decides is kept: the parsed document, and that it passed the
 * fixed rules (graphql-js's, depth, aliases, directives, introspection). The rules that read a
 * request's variables (the cost limit) run on every request. A document that fails any rule is
 * validated afresh each time, with every rule in one pass, so its errors are the same as
 * without the cache. Least recently used texts go first once the cache holds `budget`
 * characters; a syntax error is not kept.
 *
 * @example
 * const documents = new DocumentCache(parseLimited(1000), validationRules(limits, false));
 * const document = documents.parse(source);
 * const errors = documents.validate(schema, document, [costLimitRule(maxCost, () => variables)]);
 */
export class DocumentCache {
  readonly #parse: (source: string) => DocumentNode;
  readonly #rules: readonly ValidationRule[];
  readonly #budget: number;
  readonly #byText = new Map<string, Cached>();
  readonly #byDocument = new WeakMap<DocumentNode, Cached>();
  #size = 0;

  constructor(
    parse: (source: string) => DocumentNode,
    rules: readonly ValidationRule[],
    budget = DEFAULT_BUDGET,
  ) {
    this.#parse = parse;
    this.#rules = rules;
    this.#budget = budget;
  }

  /** The document of `source`: the one parsed before when the text was seen, else parsed now. */
  parse = (source: string): DocumentNode => {
    const cached = this.#byText.get(source);
    if (cached !== undefined) {
      // Map order is insertion order: moving the text to the end keeps the oldest first.
      this.#byText.delete(source);
      this.#byText.set(source, cached);
      return cached.document;
    }
    const document = this.#parse(source);
    if (source.length <= this.#budget) {
      const entry: Cached = { document, validFor: undefined };
      this.#byText.set(source, entry);
      this.#byDocument.set(document, entry);
      this.#size += source.length;
      for (const [text] of this.#byText) {
        if (this.#size <= this.#budget) break;
        this.#byText.delete(text);
        this.#size -= text.length;
      }
    }
    return document;
  };

  /**
   * The errors of `document`: the fixed rules' (remembered once it passed them) and those of
   * `perRequest`, run every time.
   */
  validate(
    schema: GraphQLSchema,
    document: DocumentNode,
    perRequest: readonly ValidationRule[],
  ): readonly GraphQLError[] {
    const cached = this.#byDocument.get(document);
    if (cached?.validFor === schema) return validateCoded(schema, document, perRequest);
    const errors = validateCoded(schema, document, [...this.#rules, ...perRequest]);
    if (cached !== undefined && errors.length === 0) cached.validFor = schema;
    return errors;
  }

  /** How many texts are held (for tests). */
  get size(): number {
    return this.#byText.size;
  }
}
