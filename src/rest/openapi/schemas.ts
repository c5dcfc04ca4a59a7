import { z } from "zod";
import type { AttributeInfo } from "../catalog.ts";
import { EXPORT_FORMATS } from "../export/formats.ts";
import type { TypeNames } from "../type-names.ts";

type Schema = Record<string, unknown>;
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** The JSON Schema of one value of an attribute, from its syntax. */
export function valueSchema(info: AttributeInfo): Schema {
  if (info.shown === "sid") {
    return {
      type: "string",
      description:
        "a security identifier as Windows shows it (S-1-5-21-…); base64 of the bytes when they are not a SID",
    };
  }
  if (info.shown === "guid") {
    return {
      type: "string",
      description:
        "a GUID as Windows shows it (its first three fields byte-reversed); base64 of the bytes when they are not 16",
    };
  }
  if (info.binary) {
    return { type: "string", contentEncoding: "base64", description: "binary, base64" };
  }
  if (info.jsonType === "integer") {
    return {
      type: ["integer", "string"],
      description: "an integer; a string when it does not fit a double exactly",
    };
  }
  if (info.jsonType === "boolean") return { type: ["boolean", "string"] };
  if (info.format === "date-time") return { type: "string", format: "date-time" };
  return { type: "string" };
}

/** An attribute as served: one value or null when single-valued, else a list or null. */
export function attributeSchema(info: AttributeInfo): Schema {
  const value = valueSchema(info);
  const description = [
    info.singleValued ? "single-valued" : "multi-valued",
    info.operational ? "operational (fields=+)" : undefined,
  ]
    .filter(Boolean)
    .join(", ");
  if (info.singleValued) {
    return { oneOf: [value, { type: "null" }], description };
  }
  return { type: ["array", "null"], items: value, description };
}

const identifiers = (type: string | undefined): Record<string, Schema> => ({
  id: {
    type: "string",
    description: "Global ID: base64 of `<type>:<entryUUID>`; accepted wherever `{id}` is.",
  },
  entryUUID: { type: "string", format: "uuid" },
  dn: { type: "string", description: "Distinguished name (RFC 4514)." },
  type: type === undefined ? { type: "string" } : { const: type },
});

/** `Entry_<token>`: an entry of one type, with the attributes its object classes allow. */
export function entrySchema(names: TypeNames, attributes: readonly AttributeInfo[]): Schema {
  return {
    type: "object",
    description: `An entry of type "${names.name}". Attributes listed are those its object classes allow; an entry may hold others (auxiliary classes), served alike. Which appear depends on \`fields\`.`,
    required: ["id", "entryUUID", "dn", "type"],
    properties: {
      ...identifiers(names.name),
      ...Object.fromEntries(attributes.map((info) => [info.name, attributeSchema(info)])),
      during: {
        type: "array",
        items: ref("Span"),
        description:
          "Only in a search with `during`: the sub-intervals of it in which the entry matched, in order.",
      },
    },
    additionalProperties: ref("AttributeValues"),
  };
}

/** `SearchResponse_<token>`. */
export function searchResponseSchema(names: TypeNames): Schema {
  return {
    type: "object",
    description:
      "A page of entries. Which members appear depends on `include` (default nodes,pageInfo).",
    properties: {
      nodes: { type: "array", items: ref(names.components.entry) },
      pageInfo: ref("PageInfo"),
      count: {
        type: "integer",
        minimum: 0,
        description: "Entries matching the filter (include=count).",
      },
    },
  };
}

/** The schemas every description has. */
export function commonSchemas(): Record<string, Schema> {
  const exportOptions = Object.fromEntries(
    EXPORT_FORMATS.map((format) => {
      const schema = z.toJSONSchema(format.options, { io: "input" }) as Schema;
      delete schema.$schema;
      return [
        `ExportOptions_${format.name.replace(/[^A-Za-z0-9_]/g, "_")}`,
        {
          ...schema,
          description: `Options of the ${format.name} export (${format.extensions.join(", ")}).`,
        },
      ];
    }),
  );
  return {
    AttributeValues: {
      description: "Any attribute: a value (single-valued attributes), a list of values, or null.",
      oneOf: [
        { type: ["string", "integer", "boolean", "null"] },
        { type: "array", items: { type: ["string", "integer", "boolean"] } },
      ],
    },
    Span: {
      type: "object",
      required: ["from", "to"],
      description:
        "A stretch of time: from `from` until `to` (excluded); `to` null while it still holds.",
      properties: {
        from: { type: "string", format: "date-time" },
        to: { type: ["string", "null"], format: "date-time" },
      },
    },
    MembershipsResponse: {
      type: "object",
      required: ["nodes"],
      description: "The groups an entry belonged to during the interval, by the groups' DNs.",
      properties: {
        nodes: {
          type: "array",
          items: {
            type: "object",
            required: ["group", "during", "direct", "via"],
            properties: {
              group: {
                type: "object",
                required: ["id", "entryUUID", "dn", "type"],
                description:
                  "The group, with its DN and type in the last stretch it held the member.",
                properties: {
                  id: { type: ["string", "null"] },
                  entryUUID: { type: "string", format: "uuid" },
                  dn: { type: "string" },
                  type: { type: ["string", "null"] },
                },
              },
              during: {
                type: "array",
                items: {
                  type: "object",
                  required: ["from", "to", "ongoing"],
                  description:
                    "A stretch of the membership, clipped to the interval: from `from` until `to` (excluded).",
                  properties: {
                    from: { type: "string", format: "date-time" },
                    to: {
                      type: ["string", "null"],
                      format: "date-time",
                      description:
                        "When the entry left the group, or, if `ongoing`, the interval's end (null for an open end).",
                    },
                    ongoing: {
                      type: "boolean",
                      description:
                        "Whether the entry was still a member at `to`: the membership went on past the interval (or `to` is null).",
                    },
                  },
                },
                description: "When it was a member, clipped to the interval.",
              },
              direct: {
                type: "boolean",
                description: "Whether the group listed the entry's own DN some of that time.",
              },
              via: {
                type: "array",
                items: { type: "string" },
                description:
                  "The DNs of the member groups through which it belonged (nested groups).",
              },
            },
          },
        },
      },
    },
    PageInfo: {
      type: "object",
      required: ["hasNextPage", "hasPreviousPage", "startCursor", "endCursor"],
      properties: {
        hasNextPage: { type: "boolean" },
        hasPreviousPage: { type: "boolean" },
        startCursor: {
          type: ["string", "null"],
          description: "Pass as `before` for the page before.",
        },
        endCursor: { type: ["string", "null"], description: "Pass as `after` for the page after." },
      },
    },
    Change: {
      type: "object",
      required: [
        "cursor",
        "changeId",
        "entryUUID",
        "id",
        "dn",
        "oldDn",
        "type",
        "entryType",
        "occurredAt",
        "recordedAt",
        "actor",
        "attributes",
        "cause",
      ],
      properties: {
        cursor: {
          type: "string",
          description: "This change's place in the feed: `after=` it to read on.",
        },
        changeId: {
          type: "string",
          format: "uuid",
          description: "The change's own id (the id of the event that records it).",
        },
        entryUUID: { type: "string", format: "uuid" },
        id: {
          type: ["string", "null"],
          description: "The entry's global ID; null for an entry of no configured type.",
        },
        dn: {
          type: "string",
          description: "The entry's DN after the change (before it, for a delete).",
        },
        oldDn: { type: ["string", "null"], description: "For a rename: the DN before it." },
        type: { enum: ["add", "modify", "modrdn", "delete"], description: "The kind of change." },
        entryType: { type: ["string", "null"], description: "The entry's configured type." },
        occurredAt: {
          type: "string",
          format: "date-time",
          description: "When the directory says it happened.",
        },
        recordedAt: { type: "string", format: "date-time", description: "When annal recorded it." },
        actor: {
          type: ["string", "null"],
          description: "Who made it (the directory's authorization identity); null when unknown.",
        },
        attributes: {
          type: "array",
          items: { type: "string" },
          description:
            "The user attributes it touched, redacted ones (values never recorded) included by name.",
        },
        cause: {
          description:
            "Why the change was made, when annal made it: the change event (webhook), GraphQL mutation or workflow step behind it, and for whom; null for changes made in the directory by others.",
          oneOf: [
            { type: "null" },
            {
              type: "object",
              required: ["kind", "id", "webhook", "source", "eventId", "subject"],
              properties: {
                kind: { const: "changeEvent" },
                id: { type: "string", description: "The id of its ChangeEventReceived event." },
                webhook: { type: "string", description: "`<hook>/<webhook>` that took it in." },
                source: { type: "string", description: "The system that sent it." },
                eventId: { type: "string", description: "The sender's id of the change event." },
                subject: { type: "string", description: "Whom the change event was about." },
              },
            },
            {
              type: "object",
              required: ["kind", "id", "requestId", "account"],
              properties: {
                kind: { const: "mutation" },
                id: { type: "string", description: "The id of its DirectoryWriteRequested event." },
                requestId: { type: "string", description: "The GraphQL request that made it." },
                account: { type: "string", description: "The account it was made for." },
              },
            },
            {
              type: "object",
              required: ["kind", "id", "instanceId", "workflow", "step", "attempt", "approvedBy"],
              properties: {
                kind: { const: "workflow" },
                id: { type: "string", description: "The id of the step's StepScheduled event." },
                instanceId: { type: "string", description: "The workflow instance." },
                workflow: { type: "string", description: "The workflow definition's name." },
                step: { type: "string", description: "The step that made the change." },
                attempt: { type: "integer", description: "The step's attempt that made it." },
                approvedBy: {
                  description: "The account the step acted for (the person who approved), or null.",
                  oneOf: [
                    { type: "null" },
                    {
                      type: "object",
                      required: ["accountId", "name", "dn"],
                      properties: {
                        accountId: { type: "string" },
                        name: { type: "string" },
                        dn: {
                          type: ["string", "null"],
                          description: "The DN its directory writes were made as.",
                        },
                      },
                    },
                  ],
                },
              },
            },
            {
              type: "object",
              required: ["kind", "id", "type"],
              properties: {
                kind: { const: "event" },
                id: { type: "string" },
                type: { type: "string", description: "The type of the recorded event." },
              },
            },
          ],
        },
        patch: {
          type: "array",
          description:
            "RFC 6902 JSON Patch from the user attributes before to after (include=patch). Values of redacted attributes never appear.",
          items: {
            type: "object",
            required: ["op", "path"],
            properties: {
              op: { enum: ["add", "remove", "replace", "move", "copy", "test"] },
              path: { type: "string" },
              from: { type: "string" },
              value: {},
            },
          },
        },
      },
    },
    ChangesResponse: {
      type: "object",
      description: "A page of changes, oldest first. Which members appear depends on `include`.",
      properties: {
        nodes: { type: "array", items: ref("Change") },
        pageInfo: ref("PageInfo"),
        count: { type: "integer", minimum: 0, description: "Changes matching (include=count)." },
      },
    },
    Problem: {
      type: "object",
      description:
        "RFC 9457 problem details. `code` is stable; the other extension members appear where they help.",
      required: ["type", "title", "status", "detail", "code"],
      properties: {
        type: { type: "string", description: "`urn:annal:problem:<code>`" },
        title: { type: "string" },
        status: { type: "integer" },
        detail: { type: "string" },
        code: { type: "string" },
        hint: { type: "string", description: "What to do about it." },
        parameter: { type: "string", description: "The query parameter at fault." },
        expected: { description: "What the parameter (or the filter at `position`) takes." },
        position: {
          type: "integer",
          description: "0-based offset in the filter where reading failed.",
        },
        format: {
          type: "string",
          description: "The filter language (or export format) concerned.",
        },
        unknown: {
          type: "array",
          items: { type: "string" },
          description: "Unknown names (strict handling).",
        },
        reason: { enum: ["unknown", "not-yet", "deleted", "other-type"] },
        target: {
          type: "string",
          description: "A custom endpoint's refused input: `json`, `form`, `query`, ...",
        },
        issues: {
          type: "array",
          description: "A custom endpoint's refused input: each path and what was expected.",
          items: {
            type: "object",
            required: ["path", "message"],
            properties: { path: { type: "string" }, message: { type: "string" } },
          },
        },
        since: { type: "string", format: "date-time" },
        requestId: {
          type: "string",
          description: "On a 500: the request id the server log has the details under.",
        },
      },
    },
    ...exportOptions,
  };
}
