import fc from "fast-check";
import { isInputObjectType } from "graphql";
import t from "tap";
import { renderFilter } from "../../src/directory/index.ts";
import type { FilterNode } from "../../src/filters/index.ts";
import { parseLdapFilter } from "../../src/filters/index.ts";
import { qFilter, whereFilter, whereSpec } from "../../src/graphql/gateway/where.ts";
import { BadUserInputError } from "../../src/graphql/index.ts";
import { startGateway } from "../support/graphql-gateway.ts";

// Fuzzed `where` and `q`: never a 500, and the filter's structure is the input's, whatever
// the values hold.
const gateway = await startGateway(t);

const nasty = fc.constantFrom(
  "*",
  "(",
  ")",
  "\\",
  "\u0000",
  ")(uid=*",
  "*)(|(uid=*))",
  "\\2a",
  "a*b",
  "",
  " ",
  "é",
  "\ud800",
  "x\udfff",
);
const value = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  nasty,
  fc.string({ maxLength: 6 }),
);
const MEMBERS = ["uid", "cn", "sn", "mail", "title", "city", "department", "employeeType"] as const;
const MATCH = new Set(["cn", "sn", "mail", "title"]);

type Input = Record<string, unknown>;

const condition = (member: string) =>
  fc.record(
    {
      eq: value,
      ne: value,
      in: fc.array(value, { maxLength: 3 }),
      present: fc.boolean(),
      ge: value,
      le: value,
      ...(MATCH.has(member)
        ? { startsWith: value, endsWith: value, contains: value, approx: value }
        : {}),
    },
    { requiredKeys: [] },
  );

const where: fc.Memo<Input> = fc.memo((depth) =>
  fc
    .tuple(
      fc
        .subarray([...MEMBERS], { maxLength: 3 })
        .chain((members) =>
          fc.tuple(...members.map((member) => condition(member).map((c) => [member, c] as const))),
        ),
      depth > 1
        ? fc.option(fc.array(where(depth - 1), { maxLength: 2 }), { nil: undefined })
        : fc.constant(undefined),
      depth > 1
        ? fc.option(fc.array(where(depth - 1), { maxLength: 2 }), { nil: undefined })
        : fc.constant(undefined),
      depth > 1 ? fc.option(where(depth - 1), { nil: undefined }) : fc.constant(undefined),
    )
    .map(([members, and, or, not]) => ({
      ...Object.fromEntries(members),
      ...(and === undefined ? {} : { _and_: and }),
      ...(or === undefined ? {} : { _or_: or }),
      ...(not === undefined ? {} : { _not_: not }),
    })),
);

const ATTRIBUTE: Record<string, string> = { city: "l", department: "ou" };

/**
 * The filter's expected skeleton, computed from the input alone: operators and attribute
 * names, no values. Undefined for input the gateway must refuse (BAD_USER_INPUT).
 */
function skeleton(input: Input): string | undefined {
  const parts: string[] = [];
  for (const member of MEMBERS) {
    const c = input[member] as Record<string, unknown> | undefined;
    if (c === undefined) continue;
    const attribute = ATTRIBUTE[member] ?? member;
    const conditions: string[] = [];
    for (const [op, operand] of Object.entries(c)) {
      const values = Array.isArray(operand) ? operand : [operand];
      if (values.some((v) => typeof v === "string" && !v.isWellFormed())) return undefined;
      if (op === "in") {
        if (values.length === 0) return undefined;
        conditions.push(
          values.length === 1
            ? `eq:${attribute}`
            : `or(${values.map(() => `eq:${attribute}`).join(",")})`,
        );
      } else if (op === "ne") conditions.push(`not(eq:${attribute})`);
      else if (op === "present")
        conditions.push(operand ? `present:${attribute}` : `not(present:${attribute})`);
      else if (["startsWith", "endsWith", "contains"].includes(op))
        conditions.push(operand === "" ? `present:${attribute}` : `substring:${attribute}`);
      else conditions.push(`${op}:${attribute}`);
    }
    if (conditions.length === 0) return undefined;
    parts.push(conditions.length === 1 ? conditions[0]! : `and(${conditions.join(",")})`);
  }
  for (const item of (input._and_ as Input[] | undefined) ?? []) {
    const part = skeleton(item);
    if (part === undefined) return undefined;
    if (part !== "") parts.push(part);
  }
  if (input._or_ !== undefined) {
    const items = (input._or_ as Input[]).map(skeleton);
    if (items.length === 0 || items.some((item) => item === undefined || item === ""))
      return undefined;
    parts.push(items.length === 1 ? items[0]! : `or(${items.join(",")})`);
  }
  if (input._not_ !== undefined) {
    const inner = skeleton(input._not_ as Input);
    if (inner === undefined || inner === "") return undefined;
    parts.push(`not(${inner})`);
  }
  return parts.length === 0 ? "" : parts.length === 1 ? parts[0]! : `and(${parts.join(",")})`;
}

function shape(node: FilterNode): string {
  switch (node.op) {
    case "and":
    case "or":
      return `${node.op}(${node.filters.map(shape).join(",")})`;
    case "not":
      return `not(${shape(node.filter)})`;
    default:
      return `${node.op}:${node.attribute}`;
  }
}

/** The filter as the directory gets it: rendered (RFC 4515) and read back, values included. */
function roundTrip(node: FilterNode): FilterNode {
  return parseLdapFilter(renderFilter(node));
}

const spec = (() => {
  const type = gateway.schema.getType("PersonWhere");
  if (!isInputObjectType(type)) throw new Error("no PersonWhere");
  return whereSpec(type);
})();

t.test(
  "a where tree's filter has the input's structure and survives rendering unchanged",
  async (t) => {
    fc.assert(
      fc.property(where(3), (input) => {
        const expected = skeleton(input);
        let built: FilterNode | undefined;
        try {
          built = whereFilter(spec, input);
        } catch (error) {
          if (!(error instanceof BadUserInputError)) throw error;
          // A NUL is refused wherever it is (PostgreSQL text cannot hold it).
          return expected === undefined || JSON.stringify(input).includes("\\u0000");
        }
        if (expected === undefined) return false;
        if (built === undefined) return expected === "";
        if (shape(built) !== expected) return false;
        const back = roundTrip(built);
        return (
          shape(back) === expected &&
          JSON.stringify(normalized(back)) === JSON.stringify(normalized(built))
        );
      }),
      { numRuns: 400 },
    );
    t.pass("400 where trees");
  },
);

/** Substring nodes with their empty parts left out, as the parser reads them. */
function normalized(node: FilterNode): unknown {
  switch (node.op) {
    case "and":
    case "or":
      return { op: node.op, filters: node.filters.map(normalized) };
    case "not":
      return { op: "not", filter: normalized(node.filter) };
    case "substring":
      return {
        op: "substring",
        attribute: node.attribute,
        initial: node.initial || undefined,
        any: node.any.filter(Boolean),
        final: node.final || undefined,
      };
    default:
      return node;
  }
}

t.test("q is one equality per attribute, whatever it holds", async (t) => {
  fc.assert(
    fc.property(value, (q) => {
      try {
        const built = qFilter(q, ["uid", "mail", "cn"])!;
        return (
          shape(built) === "or(eq:uid,eq:mail,eq:cn)" && shape(roundTrip(built)) === shape(built)
        );
      } catch (error) {
        return error instanceof BadUserInputError && (!q.isWellFormed() || q.includes("\u0000"));
      }
    }),
    { numRuns: 300 },
  );
  t.pass("300 values of q");
});

t.test(
  "over HTTP: fuzzed where and q never answer 500, and the directory gets the input's structure",
  async (t) => {
    const sent = gateway.trips.filters;
    await fc.assert(
      fc.asyncProperty(where(2), fc.option(value, { nil: undefined }), async (input, q) => {
        gateway.trips.reset();
        const { status, body } = await gateway.query(
          `query($w: PersonWhere, $q: String) { people(first: 5, where: $w, q: $q) { nodes { uid } } }`,
          {
            w: input,
            q,
          },
        );
        if (status !== 200) return false;
        const codes = (body.errors ?? []).map((error) => error.extensions.code);
        if (codes.includes("INTERNAL_SERVER_ERROR")) return false;
        const expected = skeleton(input);
        const qBad = q !== undefined && (!q.isWellFormed() || q.includes("\u0000"));
        const refused = codes.length === 1 && codes[0] === "BAD_USER_INPUT" && sent.length === 0;
        if (expected === undefined || qBad) return refused;
        // A NUL is refused wherever it reaches a filter (PostgreSQL text cannot hold it).
        if (refused && JSON.stringify(input ?? {}).includes("\\u0000")) return true;
        if (codes.length > 0) return false;
        const parts = [
          "eq:objectClass",
          ...(expected === "" ? [] : [expected]),
          ...(q === undefined ? [] : ["or(eq:uid,eq:mail,eq:cn)"]),
        ];
        const filter = sent[0]!;
        return (
          shape(filter) === (parts.length === 1 ? parts[0] : `and(${parts.join(",")})`) &&
          shape(roundTrip(filter)) === shape(filter)
        );
      }),
      { numRuns: 60 },
    );
    t.pass("60 requests");
  },
);
