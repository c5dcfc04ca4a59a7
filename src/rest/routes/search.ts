import { checkNotBeforeRetention } from "../../audit/index.ts";
import { HistoryBuildingError } from "../../history/index.ts";
import type { FastifyReply, FastifyRequest } from "fastify";
import {
  applyPreferences,
  readFilter,
  readInclude,
  servedType,
  type RestContext,
} from "../context.ts";
import { queryDigest } from "../cursor.ts";
import { RestError } from "../errors.ts";
import { checkFilename } from "../export/filename.ts";
import { exportOptions, exportSigned, formatOf } from "../export/formats.ts";
import { sendExport } from "../export/stream.ts";
import { parseFields } from "../fields.ts";
import { refuseOrReportUnknown, reportIgnoredParameters } from "../leniency.ts";
import { entryNode } from "../nodes.ts";
import { PAGE_PARAMETERS, pageInfo, readPage } from "../pagination.ts";
import { QueryParameters } from "../params.ts";
import { readPreferences } from "../prefer.ts";
import { countSearch, searchPage, type SearchRow } from "../search/page.ts";
import { SearchSql, type KeysetPosition, type SearchSpec } from "../search/sql.ts";
import { parseSort } from "../sort.ts";
import { conflict, parseInterval, parseMoment } from "../time.ts";
import { searchDuring } from "./search-during.ts";

export const SEARCH_PARAMETERS = [
  "filter",
  "fields",
  "sort",
  ...PAGE_PARAMETERS,
  "include",
  "filename",
  "export",
  "at",
  "during",
] as const;

const SEARCH_PARTS = ["nodes", "pageInfo", "count"] as const;

/**
 * `GET /api/entries/{type}`: a page of the type's entries matching `filter`, in `sort` order,
 * read from the `entries` projection, or with `at` as they were at a moment, from
 * `entry_versions`; with `filename`, the whole result as a file. With `during`, the entries
 * that matched at any moment of an interval, each with when (`searchDuring`).
 */
export async function searchEntries(
  context: RestContext,
  request: FastifyRequest<{ Params: { type: string } }>,
  reply: FastifyReply,
): Promise<unknown> {
  const type = servedType(context, request.params.type);
  const preferences = readPreferences(request.headers.prefer);
  applyPreferences(reply, preferences);
  const params = new QueryParameters(request.query, SEARCH_PARAMETERS, preferences.handling);
  reportIgnoredParameters(reply, context.log, params.ignored);
  const atText = params.get("at");
  const duringText = params.get("during");
  if (atText !== undefined && duringText !== undefined) {
    throw conflict("at", "during", "ask at one moment with at, or over an interval with during");
  }
  const catalog = await context.catalog();
  const filter = readFilter(params.get("filter"), catalog);
  const fields = parseFields(params.get("fields"), catalog);
  const sort = parseSort(params.get("sort"), catalog);
  if (sort.malformed.length > 0) {
    throw new RestError(
      "ANNAL_PARAMETER_INVALID",
      `sort: ${sort.malformed.map((key) => JSON.stringify(key)).join(", ")} is not a sort key`,
      {
        hint: "sort takes comma-separated attribute names, each with - before it for descending: sort=sn,-cn",
        details: {
          parameter: "sort",
          expected: "attribute names, each optionally prefixed with -",
        },
      },
    );
  }
  refuseOrReportUnknown(
    preferences.handling,
    { filter: filter.unknown, fields: fields.unknown, sort: sort.unknown },
    reply,
    context.log,
  );
  // Before capture's first import is in the projections, a page would be one of what the
  // history holds so far, not of the directory: say so, as an entry's route does.
  const moment = atText === undefined && duringText === undefined ? "entries" : "entry_versions";
  if (!(await context.holdsDirectory(moment))) {
    throw new HistoryBuildingError(type.names.path, { search: true });
  }
  if (duringText !== undefined) {
    if (params.has("sort")) {
      throw conflict("during", "sort", "the entries of a during search come in entryUUID order");
    }
    if (params.has("filename")) {
      throw conflict("during", "filename", "export the directory at one moment with at");
    }
    const interval = parseInterval("during", duringText, context.clock());
    if (interval.start) await checkNotBeforeRetention(context.pool, interval.start, "during");
    return searchDuring(context, reply, params, {
      type: type.names.name,
      filter: filter.ast,
      selection: fields.selection,
      catalog,
      interval,
      intervalText: duringText,
    });
  }
  const at = atText === undefined ? undefined : parseMoment("at", atText, context.clock());
  if (at) await checkNotBeforeRetention(context.pool, at);
  const base = {
    type: type.names.name,
    filter: filter.ast,
    sort: sort.keys,
    selection: fields.selection,
    ...(type.sortPairs ? { sortPairs: type.sortPairs } : {}),
  };
  const spec: SearchSpec = at ? { ...base, at } : base;
  const node = (row: SearchRow) =>
    entryNode(
      {
        entryUUID: row.entry_uuid,
        dn: row.dn,
        attributes: row.attributes,
        operational: row.operational,
      },
      type.names.name,
      fields.selection,
      catalog,
    );

  const filename = params.get("filename");
  if (filename !== undefined) {
    const sql = new SearchSql(spec);
    checkFilename(filename);
    if (!fields.selection.explicit || fields.selection.wildcard) {
      throw new RestError(
        "ANNAL_EXPORT_FIELDS_REQUIRED",
        "fields: an export needs an explicit list of attributes; * and + are refused",
        {
          hint: "name the columns: fields=cn,sn,mail (or fields=1.1 for identifiers only)",
          details: { parameter: "fields" },
        },
      );
    }
    const format = formatOf(filename);
    const options = exportOptions(format, params.get("export"));
    return sendExport(context, request, reply, {
      sql,
      shape: { type: type.names.name, selection: fields.selection, catalog, node },
      format,
      options,
      filename,
      sign: exportSigned(params.get("export")),
    });
  }
  // An empty options object asks for nothing (the documentation sends one by default).
  if (params.has("export") && params.get("export")?.trim() !== "{}") {
    throw new RestError("ANNAL_PARAMETER_INVALID", "export: export options need filename", {
      hint: "add filename=<name>.<csv|tsv|json|ndjson|json-seq|jsonld|ldif> to export",
      details: { parameter: "export" },
    });
  }

  const include = readInclude(params.get("include"), SEARCH_PARTS, ["nodes", "pageInfo"]);
  reply.header("cache-control", "no-store");
  const body: Record<string, unknown> = {};
  if (include.has("nodes") || include.has("pageInfo")) {
    const page = readPage(params, context.config);
    // A search at a moment names it as written (`now-1h`): its pages read on at the moment
    // its first page resolved, which the cursor carries after the order values.
    const digest = queryDigest(["search", spec.type, spec.filter, spec.sort, atText ?? null]);
    let position: KeysetPosition | undefined;
    let pageSpec: SearchSpec = spec;
    if (page.cursor) {
      let decoded = context.codec.decode(
        page.cursor.parameter,
        page.cursor.value,
        "search",
        digest,
      );
      if (at && Array.isArray(decoded)) {
        const moment = new Date(String(decoded.at(-1)));
        decoded = Number.isNaN(moment.getTime()) ? undefined : decoded.slice(0, -1);
        pageSpec = { ...base, at: moment };
      }
      if (!new SearchSql(pageSpec).isPosition(decoded)) {
        throw new RestError(
          "ANNAL_CURSOR_INVALID",
          `${page.cursor.parameter}: the cursor is not valid`,
          {
            hint: "pass a cursor exactly as annal returned it",
            details: { parameter: page.cursor.parameter },
          },
        );
      }
      position = decoded;
    }
    const sql = new SearchSql(pageSpec);
    const result = await searchPage(context.pool, sql, {
      direction: page.direction,
      limit: page.limit,
      ...(position ? { position } : {}),
    });
    const moment = pageSpec.at?.toISOString();
    const cursorOf = (row: SearchRow | undefined) =>
      row
        ? context.codec.encode("search", digest, [
            ...sql.positionOf(row),
            ...(moment === undefined ? [] : [moment]),
          ])
        : null;
    if (include.has("nodes")) body.nodes = result.rows.map(node);
    if (include.has("pageInfo")) {
      body.pageInfo = pageInfo(page, result, {
        start: cursorOf(result.rows[0]),
        end: cursorOf(result.rows.at(-1)),
      });
    }
  }
  if (include.has("count")) body.count = await countSearch(context.pool, new SearchSql(spec));
  return body;
}
