import { Hono } from "hono";
import type { EndpointBindings, EndpointsApp, EndpointsContext } from "annal";

const ENCODINGS = ["utf-8", "windows-1252", "iso-8859-1", "utf-16le"] as const;

interface Person {
  uid: string;
  displayName: string | null;
  mail: string | null;
  title: string | null;
}

interface Page {
  entry: {
    people?: { nodes: Person[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  } | null;
}

/** One page of a department's people: GraphQL pages hold at most 100. */
const PAGE = `
  query DepartmentPeople($dn: DN!, $after: String) {
    entry(dn: $dn) {
      ... on Department {
        people(first: 100, after: $after) {
          nodes { uid displayName mail title }
          pageInfo { hasNextPage endCursor }
        }
      }
    }
  }
`;

/**
 * `/departments/:ou/people.csv`: a department's people as CSV, in the encoding asked for. A
 * route tree of its own, made from the context's utilities and mounted with `app.route`.
 */
export function departmentPeople(context: EndpointsContext): EndpointsApp {
  const { csv, iconv, v, vValidator, HTTPException } = context;
  const people: EndpointsApp = new Hono<{ Bindings: EndpointBindings }>();
  people.get(
    "/:ou/people.csv",
    vValidator("query", v.object({ encoding: v.optional(v.picklist(ENCODINGS), "utf-8") })),
    async (c) => {
      if (!c.env.viewer.has("read")) {
        throw new HTTPException(403, { message: "read access needed" });
      }
      const { encoding } = c.req.valid("query");
      const ou = c.req.param("ou");
      // The ou becomes part of a DN: letters, digits and dashes only.
      if (!/^[a-z0-9-]{1,64}$/.test(ou)) {
        throw new HTTPException(404, { message: "there is no such department" });
      }
      const dn = `ou=${ou},ou=people,dc=example,dc=org`;
      const found: Person[] = [];
      let after: string | null = null;
      for (;;) {
        const page: Page = await c.env.query<Page>(PAGE, { dn, after });
        const connection = page.entry?.people;
        if (!connection) throw new HTTPException(404, { message: `there is no department ${ou}` });
        found.push(...connection.nodes);
        if (!connection.pageInfo.hasNextPage || connection.pageInfo.endCursor === null) break;
        after = connection.pageInfo.endCursor;
      }
      const text = csv.stringify(
        found.map((p) => [p.uid, p.displayName ?? "", p.mail ?? "", p.title ?? ""]),
        { header: true, columns: ["uid", "name", "mail", "title"] },
      );
      // Spreadsheets read UTF-8 and UTF-16 by their byte-order mark; the others have none.
      const bytes = iconv.encode(text, encoding, {
        addBOM: encoding === "utf-8" || encoding === "utf-16le",
      });
      return c.body(new Uint8Array(bytes), 200, {
        "content-type": `text/csv; charset=${encoding}`,
        "content-disposition": `attachment; filename="${ou}-people.csv"`,
      });
    },
  );
  return people;
}
