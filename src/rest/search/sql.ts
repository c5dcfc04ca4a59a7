import {
  compileFilterToIndexedSet,
  compileFilterToIndexedSql,
  compileValueTest,
  type FilterNode,
  type ValueTestNode,
} from "../../filters/index.ts";
import {
  ENTRIES,
  ENTRY_VALUES,
  VALUE_KEY_LENGTH,
  sortValueSql,
} from "../../../projections/entries/index.ts";
import { UUID, versionsAt } from "../../history/index.ts";
import type { FieldSelection } from "../fields.ts";
import type { SortKey } from "../sort.ts";

/** A search of one type's entries, checked and resolved. */
export interface SearchSpec {
  readonly type: string;
  /** The filter with canonical names and no unknown attributes (`checkAttributes`). */
  readonly filter: FilterNode;
  readonly sort: readonly SortKey[];
  readonly selection: FieldSelection;
  /** Answer as the directory was at this moment (`entry_versions`), not as it is now. */
  readonly at?: Date;
  /**
   * The type's sort pairs (`[[directory.types]] sortPairs`): a sort by one of them reads each
   * group of the first key's ties from the pair's index (`SearchSql.pair`).
   */
  readonly sortPairs?: readonly (readonly [string, string])[];
}

/** One column of the order: a sort key, or the entryUUID that breaks ties. */
interface OrderColumn {
  /** Its name in the query `q`. */
  readonly alias: string;
  /** Entries without the attribute: NULL, sorted last either way. */
  readonly nullable: boolean;
  readonly descending: boolean;
  readonly cast: "text" | "uuid";
}

/** A sort key walked in its attribute's index. */
interface WalkedKey {
  readonly attribute: string;
  readonly attributeParam: string;
  readonly descending: boolean;
}

/** Values of the order columns of one row: where a page starts or ends. */
export type KeysetPosition = readonly (string | null)[];

/**
 * The SQL of a search, in parts the queries share. `inner` selects the matching entries with
 * their order columns (`s0`, `s1`, ..., `entry_uuid`); the page, the count and the export wrap
 * it as `q`, so the order and the keyset refer to the very values the database computed (the
 * cursor carries them; PostgreSQL's `lower` and JavaScript's need not agree).
 *
 * Sort values are the first value of the attribute, lower-cased, cut at 200 characters (so a
 * cursor stays short), compared byte-wise (`COLLATE "C"`), the same on every server.
 *
 * The filter is answered from the entries' indexed values (`entry_values`), or at a moment
 * from the spans of the versions' values valid then (`versionsAt`). When the first
 * sort key is an attribute, `walk` names it: a page of a filter that matches many entries then
 * walks that attribute's keys in index order (`searchPage`) instead of sorting every match;
 * the keys there are the very values `inner` computes from the JSON, so a cursor of either
 * way reads on in the other.
 */
export class SearchSql {
  readonly params: unknown[] = [];
  readonly inner: string;
  readonly where: string;
  /** Whether the search has a filter (beyond its type). */
  readonly filtered: boolean;
  /**
   * The comparison of the filter that narrows the walked attribute itself to a range of its
   * order (`sn eq "Rossi"` or `sn sw "Ro"` sorted by `sn`), when it has one: its matches then
   * lie together in the walk's order, after every key before them. A walk reads only that
   * range of the index (`inCluster`), which holds every match unless a match meets it with a
   * later value than its first, the sort key (`laterValues`; `walks` sorts those searches).
   */
  readonly cluster: ValueTestNode | undefined;
  /**
   * The filter's matches as a query of their uuids (`entry_uuid`) over the indexed values
   * alone, with its own parameters, when it has one (`compileFilterToIndexedSet`): an entry
   * appears once per matching value, which is close enough to decide how to read a page.
   */
  readonly matchSet: { readonly sql: string; readonly params: readonly unknown[] } | undefined;
  /** `where` with the filter said of a walk's index row `k` (the entry's `e` is the same). */
  readonly keyedWhere: string;
  /** How many of `params` the WHERE clause uses (they come first). */
  readonly whereParams: number;
  readonly source: string;
  readonly columns: readonly OrderColumn[];
  /** The parameter holding the type searched. */
  readonly typeParam: string;
  /** The first sort key when it is an attribute: its name, its name's parameter, its direction. */
  readonly walk: WalkedKey | undefined;
  /**
   * The second sort key when the first is walked and it is an attribute too: a page within one
   * large group of the first key's ties walks this one's index (`groupWalkSource`).
   */
  readonly group: WalkedKey | undefined;
  /**
   * The walked key and the group's when they are a configured sort pair and the order within a
   * group is the pair's index's (the second ascending, then the entry): each group is then one
   * range of that index (`groupWalkSource`), whatever its size. Their sort values as that
   * index spells them (`sortValueSql`).
   */
  readonly pair: { readonly first: string; readonly second: string } | undefined;
  /** The select list of `inner` without the sort columns. */
  readonly selectHead: string;
  /** The sort columns after the first (`selectTail`) and after the second (`groupTail`). */
  readonly selectTail: string;
  readonly groupTail: string;

  constructor(spec: SearchSpec) {
    const bind = (value: unknown) => `$${this.params.push(value)}`;
    this.typeParam = bind(spec.type);
    const at = spec.at;
    // Now: the entries and their value index. At a moment: the versions valid then, with the
    // same columns, and the versions' value index, read at that moment.
    const atParam = at ? bind(at) : undefined;
    const conditions = [`e.type = ${this.typeParam}`];
    // At a moment the filter is part of the versions read (`versionsAt`).
    const compile = (entryColumn: string, params: unknown[]) =>
      compileFilterToIndexedSql(spec.filter, {
        valuesTable: ENTRY_VALUES,
        entryColumn,
        typeParam: this.typeParam,
        keyLength: VALUE_KEY_LENGTH,
        params,
      });
    // The same filter said of a walk's index row `k`, binding the same values in the same
    // order (so to the same parameters): a walk then probes it on each key it reads before it
    // reads the entry, instead of reading every entry it passes (`walkSource`).
    const walkFilter = atParam ? undefined : compile("k.entry_uuid", [...this.params]);
    const filter = atParam ? undefined : compile("e.entry_uuid", this.params);
    this.source = atParam
      ? versionsAt({ at: atParam, type: this.typeParam, filter: spec.filter, params: this.params })
      : `${ENTRIES} AS e`;
    this.filtered = filter
      ? filter !== "TRUE"
      : !(spec.filter.op === "and" && spec.filter.filters.length === 0);
    const setParams: unknown[] = [spec.type];
    const set = at
      ? undefined
      : compileFilterToIndexedSet(spec.filter, {
          valuesTable: ENTRY_VALUES,
          typeParam: "$1",
          keyLength: VALUE_KEY_LENGTH,
          params: setParams,
        });
    this.matchSet = set === undefined ? undefined : { sql: set, params: setParams };
    if (filter && this.filtered) conditions.push(filter);
    this.where = conditions.join(" AND ");
    this.keyedWhere =
      walkFilter && this.filtered ? `${conditions[0]} AND ${walkFilter}` : this.where;
    this.whereParams = this.params.length;

    const columns: OrderColumn[] = [];
    const walked: (WalkedKey | undefined)[] = [];
    const sortSql = spec.sort.map((key, index) => {
      const alias = key.kind === "entryUUID" ? "entry_uuid" : `s${index}`;
      columns.push({
        alias,
        nullable: key.kind === "attribute",
        descending: key.descending,
        cast: key.kind === "entryUUID" ? "uuid" : "text",
      });
      if (key.kind === "entryUUID") return undefined;
      if (key.kind === "dn") return `(e.dn_norm COLLATE "C") AS ${alias}`;
      const column = key.operational ? "e.operational" : "e.attributes";
      const name = bind(key.name);
      walked[index] = { attribute: key.name, attributeParam: name, descending: key.descending };
      return `(left(lower(${column} -> ${name}::text ->> 0), ${VALUE_KEY_LENGTH}) COLLATE "C") AS ${alias}`;
    });
    // The value index holds today's values only: a search at a moment sorts its matches.
    const walk = at ? undefined : walked[0];
    this.walk = walk;
    this.group = walk && walked[1];
    const first = spec.sort[0];
    this.cluster =
      walk !== undefined && first?.kind === "attribute"
        ? narrowing(spec.filter, first.name)
        : undefined;
    if (!columns.some((column) => column.alias === "entry_uuid")) {
      columns.push({ alias: "entry_uuid", nullable: false, descending: false, cast: "uuid" });
    }
    this.columns = columns;
    this.pair = this.group && sortPairOf(spec, columns);
    const select = [
      "e.entry_uuid",
      "e.dn",
      "e.modified_at",
      `${this.#attributesSql(spec.selection, false, bind)} AS attributes`,
      `${this.#attributesSql(spec.selection, true, bind)} AS operational`,
    ];
    const sorts = sortSql.filter((sql) => sql !== undefined);
    this.selectHead = select.join(", ");
    this.selectTail = sorts.slice(walk ? 1 : 0).join(", ");
    this.groupTail = sorts.slice(2).join(", ");
    this.inner = `SELECT ${[...select, ...sorts].join(", ")} FROM ${this.source} WHERE ${this.where}`;
  }

  /** Only what the response shows: all of a column, some of its attributes, or nothing. */
  #attributesSql(
    selection: FieldSelection,
    operational: boolean,
    bind: (value: unknown) => string,
  ): string {
    const column = operational ? "e.operational" : "e.attributes";
    if (operational ? selection.allOperational : selection.allUser) return column;
    const named = selection.names.filter((info) => info.operational === operational);
    if (named.length === 0) return "NULL::jsonb";
    return `jsonb_build_object(${named
      .map((info) => {
        const name = bind(info.name);
        return `${name}::text, ${column} -> ${name}::text`;
      })
      .join(", ")})`;
  }

  /**
   * `ORDER BY` over `q` for reading forward, or backward (every direction flipped). The first
   * `keyed` columns have a value in every row (a walk's keyed branch), so each is ordered by
   * its value alone, as its index is; the first `fixed` columns hold one value in every row (a
   * group's rows) and are left out, so that the next column's index gives the order.
   */
  orderBy(direction: "forward" | "backward", keyed = 0, fixed = 0): string {
    const flip = direction === "backward";
    return this.columns
      .flatMap((column, index) => {
        if (index < fixed) return [];
        const descending = column.descending !== flip;
        const order = `q.${column.alias} ${descending ? "DESC" : "ASC"}`;
        return column.nullable && index >= keyed
          ? [`(q.${column.alias} IS NULL) ${flip ? "DESC" : "ASC"}`, order]
          : [order];
      })
      .join(", ");
  }

  /**
   * The bound on column `index` (by default the first) implied by `keyset` (`q.s0 >= $x`
   * reading an ascending column forward), said on its own so that an index on that column
   * starts the page at the cursor instead of filtering its way there; the columns before it
   * hold one value in every row read. None when the position has no value there. Reading on
   * after a value also reads the rows without one (NULLs sort last), unless every row has one
   * (`index < keyed`: a walk's keyed branch).
   */
  leadingBound(
    position: KeysetPosition,
    side: "after" | "before",
    params: unknown[],
    keyed = 0,
    index = 0,
  ): string {
    const column = this.columns[index]!;
    const value = position[index] ?? null;
    if (value === null) return "TRUE";
    const upward = (side === "after") !== column.descending;
    const bound = `q.${column.alias} ${upward ? ">=" : "<="} $${params.push(value)}::${column.cast}`;
    return column.nullable && side === "after" && index >= keyed
      ? `(${bound} OR q.${column.alias} IS NULL)`
      : bound;
  }

  /** Whether the filter narrows the walked attribute to a range of its order (`cluster`). */
  get clustered(): boolean {
    return this.cluster !== undefined;
  }

  /**
   * Whether the cluster is one value of the walked attribute (`sn eq "Meyer"`): walked, it is
   * one group of the first key's ties, whose matches are the filter's.
   */
  get pointCluster(): boolean {
    return this.cluster?.op === "eq" || this.cluster?.op === "approx";
  }

  /**
   * The condition that keeps a walk of the first sort key's index (its row `alias`) to the
   * filter's range of it (`cluster`), binding its values to `params`: said on the index's own
   * row, so that the walk is one range of the index; the filter itself still decides. `TRUE`
   * without a cluster.
   */
  inCluster(alias: string, params: unknown[]): string {
    if (!this.cluster) return "TRUE";
    const options = { alias, keyLength: VALUE_KEY_LENGTH, params, range: true };
    return compileValueTest(this.cluster, options) ?? "TRUE";
  }

  /**
   * Whether a value after an entry's first meets the cluster's comparison, as a query of one
   * row or none with its own parameters: such an entry may match with its sort key (its first
   * value) outside the range a walk reads. Read from the index of later values, so it costs
   * one probe when none does.
   */
  laterValues(): { readonly sql: string; readonly params: readonly unknown[] } {
    const walk = this.walk;
    if (!walk || !this.cluster) throw new Error("laterValues: the search has no cluster");
    const params: unknown[] = [this.params[0], walk.attribute];
    return {
      sql: `SELECT 1 FROM ${ENTRY_VALUES} AS l
             WHERE l.type = $1 AND l.attribute = $2::text AND l.ordinal > 0
               AND ${this.inCluster("l", params)} LIMIT 1`,
      params,
    };
  }

  /**
   * A walk's rows as `q`: `keyed`, the entries with a first value of the walked attribute,
   * read from its index in key order (within the cluster, if any), or the entries without one.
   * Binds the cluster's values to `params`.
   */
  walkSource(branch: "keyed" | "unkeyed", params: unknown[]): string {
    const walk = this.walk;
    if (!walk) throw new Error("walkSource: the first sort key is not an attribute");
    const tail = this.selectTail ? `, ${this.selectTail}` : "";
    if (branch === "keyed") {
      return `SELECT ${this.selectHead}, k.value_key AS s0${tail}
        FROM ${ENTRY_VALUES} AS k JOIN ${this.source} ON e.entry_uuid = k.entry_uuid
       WHERE k.type = ${this.typeParam} AND k.attribute = ${walk.attributeParam}::text
         AND k.ordinal = 0 AND ${this.inCluster("k", params)} AND ${this.keyedWhere}`;
    }
    return `SELECT ${this.selectHead}, NULL::text COLLATE "C" AS s0${tail}
      FROM ${this.source}
     WHERE ${this.where} AND NOT EXISTS (SELECT 1 FROM ${ENTRY_VALUES} AS k
       WHERE k.entry_uuid = e.entry_uuid AND k.attribute = ${walk.attributeParam}::text
         AND k.ordinal = 0)`;
  }

  /**
   * The walked attribute's first values of the matching entries, as `q` (`q.entry_uuid`,
   * `q.s0`), read from its index alone: how the walk's groups of ties are found and counted.
   * The entries' own table is not read: every row of `entry_values` belongs to an entry of
   * its type. Binds the walked attribute's name (and the cluster's values) to `params`, which
   * must hold the WHERE clause's parameters (and no others: a parameter the query does not use
   * has no type).
   */
  groupKeys(params: unknown[]): string {
    const walk = this.walk;
    if (!walk) throw new Error("groupKeys: the first sort key is not an attribute");
    return `SELECT e.entry_uuid, e.s0
      FROM (SELECT k.entry_uuid, k.type, k.value_key AS s0 FROM ${ENTRY_VALUES} AS k
             WHERE k.type = ${this.typeParam} AND k.ordinal = 0
               AND k.attribute = $${params.push(walk.attribute)}::text
               AND ${this.inCluster("k", params)}) AS e
     WHERE ${this.where}`;
  }

  /**
   * The rows of one group of the walked attribute's ties (first value `groupParam`), as `q`,
   * for walking the second sort key's index within the group: `keyed`, the group's entries
   * with a first value of the second key, or those without one.
   */
  groupWalkSource(branch: "keyed" | "unkeyed", groupParam: string): string {
    const { walk, group } = this;
    if (!walk || !group) throw new Error("groupWalkSource: the sort has no two attribute keys");
    const tail = this.groupTail ? `, ${this.groupTail}` : "";
    // A cluster of one value (`sn eq "Meyer"`) is one group: the filter alone keeps the walk
    // to it, since a walk reads a cluster only when no later value than an entry's first meets
    // it. Said twice, the planner took the two for independent, the group for 20 times rarer
    // than it is, and sorted all of it (5,000 of 100,000 entries, 400 ms) instead of walking.
    // (The walked attribute's name is a parameter of every statement of the search: named.)
    const inGroup = (entry: string) =>
      this.pointCluster
        ? `${walk.attributeParam}::text IS NOT NULL`
        : `EXISTS (SELECT 1 FROM ${ENTRY_VALUES} AS g
       WHERE g.type = ${this.typeParam} AND g.attribute = ${walk.attributeParam}::text
         AND g.value_key = ${groupParam}::text AND g.ordinal = 0 AND g.entry_uuid = ${entry})`;
    const s0 = `${groupParam}::text COLLATE "C" AS s0`;
    if (this.pair) {
      // The group is one value of the pair index's first column: a range of the index, in
      // the page's order (the second's value, then the entry), the filter probed on each row.
      const first = sortValueSql("e.attributes", this.pair.first);
      const second = sortValueSql("e.attributes", this.pair.second);
      const keyed = branch === "keyed";
      // The attributes' names are parameters of every statement of the search: named.
      const named = `${walk.attributeParam}::text IS NOT NULL AND ${group.attributeParam}::text IS NOT NULL`;
      return `SELECT ${this.selectHead}, ${s0}, ${keyed ? second : `NULL::text COLLATE "C"`} AS s1${tail}
        FROM ${this.source}
       WHERE ${first} = ${groupParam}::text AND ${second} IS ${keyed ? "NOT NULL" : "NULL"}
         AND ${named} AND ${this.where}`;
    }
    if (branch === "keyed") {
      return `SELECT ${this.selectHead}, ${s0}, k.value_key AS s1${tail}
        FROM ${ENTRY_VALUES} AS k JOIN ${this.source} ON e.entry_uuid = k.entry_uuid
       WHERE k.type = ${this.typeParam} AND k.attribute = ${group.attributeParam}::text
         AND k.ordinal = 0 AND ${inGroup("k.entry_uuid")} AND ${this.keyedWhere}`;
    }
    return `SELECT ${this.selectHead}, ${s0}, NULL::text COLLATE "C" AS s1${tail}
      FROM ${this.source}
     WHERE ${this.where} AND ${inGroup("e.entry_uuid")} AND NOT EXISTS (SELECT 1 FROM ${ENTRY_VALUES} AS k
       WHERE k.entry_uuid = e.entry_uuid AND k.attribute = ${group.attributeParam}::text
         AND k.ordinal = 0)`;
  }

  /**
   * Rows strictly after (`after`) or strictly before (`before`) `position` in the forward
   * order: the first differing column decides, `(a > x) OR (a = x AND b > y) OR ...`, with
   * NULLs (missing attributes) after every value.
   */
  keyset(position: KeysetPosition, side: "after" | "before", params: unknown[]): string {
    const bind = (value: unknown, cast: string) => `$${params.push(value)}::${cast}`;
    const equal: string[] = [];
    const alternatives: string[] = [];
    this.columns.forEach((column, index) => {
      const value = position[index] ?? null;
      const q = `q.${column.alias}`;
      const beyond = (side === "after") !== column.descending ? ">" : "<";
      let strictly: string;
      let same: string;
      if (value === null) {
        strictly = side === "after" ? "FALSE" : `${q} IS NOT NULL`;
        same = `${q} IS NULL`;
      } else {
        const param = bind(value, column.cast);
        const compare = `${q} ${beyond} ${param}`;
        strictly = column.nullable && side === "after" ? `(${q} IS NULL OR ${compare})` : compare;
        same = `${q} = ${param}`;
      }
      alternatives.push([...equal, strictly].join(" AND "));
      equal.push(same);
    });
    const predicate = alternatives.map((alternative) => `(${alternative})`).join(" OR ");
    // A missing attribute's comparisons are NULL, which here always means "no".
    return this.columns.some((column) => column.nullable)
      ? `COALESCE(${predicate}, FALSE)`
      : `(${predicate})`;
  }

  /** The position of a row read by `inner`. */
  positionOf(row: Record<string, unknown>): KeysetPosition {
    return this.columns.map((column) => {
      const value = row[column.alias];
      return value === null || value === undefined ? null : String(value);
    });
  }

  /** Checks a decoded cursor position has this query's shape. */
  isPosition(value: unknown): value is KeysetPosition {
    return (
      Array.isArray(value) &&
      value.length === this.columns.length &&
      value.every((item, index) => {
        const column = this.columns[index]!;
        if (item === null) return column.nullable;
        if (typeof item !== "string") return false;
        return column.cast === "uuid" ? UUID.test(item) : item.length <= 1000;
      })
    );
  }
}

/**
 * The first two sort keys as a configured sort pair (`SearchSpec.sortPairs`), when they are
 * one, of user attributes (the pair's index reads `attributes`), and a group's order is the
 * index's: the second key ascending, then the entry ascending, nothing else.
 */
function sortPairOf(
  spec: SearchSpec,
  columns: readonly OrderColumn[],
): { first: string; second: string } | undefined {
  const [first, second] = spec.sort;
  if (first?.kind !== "attribute" || second?.kind !== "attribute") return undefined;
  if (first.operational || second.operational || second.descending) return undefined;
  if (columns.length !== 3 || columns[2]!.descending) return undefined;
  const configured = (spec.sortPairs ?? []).some(([a, b]) => a === first.name && b === second.name);
  return configured ? { first: first.name, second: second.name } : undefined;
}

/**
 * The comparison of `filter` (at its top or in a conjunction at its top) that every match's
 * `attribute` meets and that holds its values to one range of the attribute's order: an
 * equality, an ordering, or a substring with an initial piece. A presence test, another
 * substring, an `or` or a `not` does not say where the values lie.
 */
function narrowing(filter: FilterNode, attribute: string): ValueTestNode | undefined {
  const name = attribute.toLowerCase();
  const ranged = (node: FilterNode): node is ValueTestNode =>
    node.op !== "and" &&
    node.op !== "or" &&
    node.op !== "not" &&
    node.op !== "present" &&
    (node.op !== "substring" || node.initial !== undefined) &&
    node.attribute.toLowerCase() === name;
  return filter.op === "and" ? filter.filters.find(ranged) : ranged(filter) ? filter : undefined;
}
