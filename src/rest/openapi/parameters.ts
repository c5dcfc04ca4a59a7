import { MAX_FILTER_LENGTH } from "../../filters/index.ts";
import { EXPORT_FORMATS } from "../export/formats.ts";

type Parameter = Record<string, unknown>;

const query = (name: string, description: string, schema: Record<string, unknown>): Parameter => ({
  name,
  in: "query",
  required: false,
  description,
  schema,
});

/** Every parameter of the channel, as components, by name. */
export function parameterComponents(limits: {
  pageSize: number;
  maxPageSize: number;
  timeZone: string;
}) {
  const page = { type: "integer", minimum: 1, maximum: limits.maxPageSize };
  const extensions = EXPORT_FORMATS.flatMap((format) => format.extensions).join(", ");
  return {
    filter: query(
      "filter",
      [
        "Which entries. The language is chosen by the first characters:",
        '- JSON (`{` or `[`): `{"sn": "Smith", "title": ["Engineer", "Architect"], "manager": null}` (a list: any of them; null: absent; `$and`, `$or`, `$not` combine)',
        "- LDAP (`(` then `&`, `|`, `!` or `attr=`): `(&(sn=Smith)(givenName=A*))` (RFC 4515)",
        '- the default expression: `sn = Smith AND (givenName = "Ann*" OR NOT mail = *)`',
        '- SCIM (RFC 7644): `sn eq "Smith" and not (title pr)`',
        "",
        "Comparisons hold when any value of the attribute matches, ignoring case. Unknown attributes match nothing and are named in `Annal-Unknown-Attributes` (or, with `Prefer: handling=strict`, are refused). A malformed filter gets 400 with the `position` and what was `expected`.",
      ].join("\n"),
      { type: "string", maxLength: MAX_FILTER_LENGTH },
    ),
    fields: query(
      "fields",
      "Which attributes: comma-separated names; `*` every user attribute (the default), `+` every operational one, `1.1` none (identifiers only). Named attributes the entry lacks are null. Every node has `id`, `entryUUID`, `dn` and `type`. Exports need an explicit list.",
      { type: "string" },
    ),
    sort: query(
      "sort",
      "Order: comma-separated attribute names (or `dn`, `entryUUID`); `-` before a name for descending: `sn,-cn`. By the first value, ignoring case; entries without the attribute last. Default: by entryUUID.",
      { type: "string" },
    ),
    first: query("first", `Page forward: this many (default ${limits.pageSize}).`, page),
    after: query("after", "Page forward from this cursor (a page's `endCursor`).", {
      type: "string",
    }),
    last: query("last", "Page backward: the last this many.", page),
    before: query("before", "Page backward from this cursor (a page's `startCursor`).", {
      type: "string",
    }),
    limit: query("limit", "Page size: `first`, or `last` when `before` is given.", page),
    includeSearch: query(
      "include",
      "Parts of the response, comma-separated: `nodes`, `pageInfo`, `count`. Default `nodes,pageInfo`; `count` alone counts without reading entries.",
      { type: "string" },
    ),
    filename: query(
      "filename",
      `Export mode: the whole result (no pagination) streams as a file of this name (e.g. \`users.csv\`), its format chosen by the extension (${extensions}). Needs the \`export\` access function and an explicit \`fields\` list.`,
      { type: "string" },
    ),
    export: {
      name: "export",
      in: "query",
      required: false,
      description:
        'Export options, a JSON object; the keys depend on the format (see the ExportOptions_* schemas), e.g. `{"delimiter":";","nulls":"-"}` for CSV.',
      content: {
        "application/json": {
          // Documentation pre-fills a parameter from its example: an empty object asks for nothing.
          example: {},
          // anyOf, not oneOf: `{}` and options common to several formats (`nulls`) are valid
          // for each of them, and the server takes them for whichever `filename` names.
          schema: {
            anyOf: EXPORT_FORMATS.map((format) => ({
              $ref: `#/components/schemas/ExportOptions_${format.name.replace(/[^A-Za-z0-9_]/g, "_")}`,
            })),
          },
        },
      },
    },
    at: query(
      "at",
      `The entry as it was at this moment: ISO 8601 (\`2026-11-20T10:00:00Z\`; without an offset in ${limits.timeZone}), \`now\`, \`now-1h\`, \`now+2h\`, a duration (\`24h\` ago), or a phrase (\`yesterday\`, \`last week\`, ...). 404 with \`reason\` when the entry did not exist then.`,
      { type: "string" },
    ),
    atSearch: query(
      "at",
      `The directory as it was at this moment (from the entries' recorded versions): ISO 8601 (\`2026-11-20T10:00:00Z\`; without an offset in ${limits.timeZone}), \`now-1h\`, a duration (\`24h\` ago), or a phrase (\`yesterday\`, \`last month\`, ...). Filters, sorting, pages, \`count\` and exports answer as a search made then did; the pages of one search keep the moment its first page read. Not with \`during\`.`,
      { type: "string" },
    ),
    during: query(
      "during",
      `An interval, ISO 8601 \`<start>/<end>\` (half-open: the end excluded), each side a moment as for \`at\` (read in ${limits.timeZone}), or one side a duration (\`2026-03-01/P1M\`, \`P7D/now\`), or \`..\` for an open side (\`2026-03-01/..\`). On a search: the entries that matched the filter at any moment of it, in entryUUID order, each with \`during\`, the sub-intervals in which it matched (\`to\` null: still matches); not with \`at\`, \`sort\` or \`filename\`. On changes: those that occurred in it (not with \`since\` or \`range\`). On memberships: the groups held in it (default: ever). A bad interval is 400 \`ANNAL_INTERVAL_INVALID\`, a start not before the end \`ANNAL_INTERVAL_REVERSED\`.`,
      { type: "string" },
    ),
    range: query(
      "range",
      "A time window: alone, the last this long; with `since`, this long from `since`. `90s`, `15m`, `24h`, `7d`, `2w`, `1h30m`, or ISO 8601 (`PT15M`, `P1D`, `P1M`).",
      { type: "string" },
    ),
    since: query(
      "since",
      `Changes from this moment on: ISO 8601, \`now-1h\`, a duration (\`24h\` ago), or a phrase read in ${limits.timeZone}: \`today\`, \`yesterday\`, \`this week\`, \`last week\`, \`this month\`, \`last month\`, \`this year\`, \`last year\`, \`last 3 days\`, \`2 hours ago\`.`,
      { type: "string" },
    ),
    changeType: query(
      "type",
      "Kinds of change, comma-separated: `add`, `modify`, `modrdn` (or `rename`), `delete`.",
      { type: "string" },
    ),
    affects: query(
      "affects",
      "Changes that touched one of these attributes, comma-separated (redacted attributes included: their changes are recorded, their values not).",
      { type: "string" },
    ),
    entryType: query(
      "entryType",
      "Changes of entries of these configured types, comma-separated, by name (`user`) or path (`users`). An extension of annal's.",
      { type: "string" },
    ),
    actor: query(
      "actor",
      "Changes whose actor (the DN the directory names) contains this text, case-insensitively. An extension of annal's.",
      { type: "string" },
    ),
    adds: query(
      "adds",
      "Changes that added this value (compared case-insensitively) to an attribute, to one of `affects` when given: `affects=member&adds=<a person's DN>` lists the groups the person was added to. An extension of annal's.",
      { type: "string", minLength: 1, maxLength: 1000 },
    ),
    includeChanges: query(
      "include",
      "Parts of the response, comma-separated: `nodes`, `patch` (each node's RFC 6902 patch), `pageInfo`, `count`. Default `nodes,pageInfo`; `count` alone counts without reading changes.",
      { type: "string" },
    ),
    id: {
      name: "id",
      in: "path",
      required: true,
      description:
        "The entry: its entryUUID, its global ID, or its DN URL-encoded (`uid%3Dalice%2Cou%3Dpeople%2Cdc%3Dexample%2Cdc%3Dorg`).",
      schema: { type: "string" },
    },
    prefer: {
      name: "Prefer",
      in: "header",
      required: false,
      description:
        "`handling=strict`: unknown attribute names (and query parameters) are refused with 400 listing them; `handling=lenient` (the default) ignores them and names them in `Annal-Unknown-Attributes` (and `Annal-Ignored-Parameters`). `Preference-Applied` says which applied.",
      schema: { type: "string", enum: ["handling=strict", "handling=lenient"] },
    },
    ifNoneMatch: {
      name: "If-None-Match",
      in: "header",
      required: false,
      description: "An ETag from an earlier lookup: 304 when the representation is unchanged.",
      schema: { type: "string" },
    },
    ifModifiedSince: {
      name: "If-Modified-Since",
      in: "header",
      required: false,
      description: "304 when the entry has not changed since (ignored with If-None-Match).",
      schema: { type: "string" },
    },
  };
}
