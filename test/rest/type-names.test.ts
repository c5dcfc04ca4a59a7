import Fastify from "fastify";
import { pino } from "pino";
import t from "tap";
import type { Pool } from "../../src/db/index.ts";
import { checkTypeNames, restPlugin, typeNamesOf } from "../../src/rest/index.ts";
import { testConfig } from "./fixtures/harness.ts";
import { createAuthentication } from "../../src/auth/index.ts";

t.test(
  "a type's REST path is its plural; operationIds and components derive from it",
  async (t) => {
    t.match(typeNamesOf("user"), {
      name: "user",
      path: "users",
      token: "user",
      operations: { search: "searchUsers", lookup: "lookupUser", changes: "getUserChanges" },
      components: { entry: "Entry_user", searchResponse: "SearchResponse_user" },
    });
    t.match(typeNamesOf("person"), {
      path: "people",
      operations: { search: "searchPeople", lookup: "lookupPerson" },
    });
    t.match(typeNamesOf("policy"), { path: "policies" });
    t.match(typeNamesOf("groups"), {
      path: "groups",
      operations: { lookup: "lookupGroup", search: "searchGroups" },
    });
    t.match(typeNamesOf("sheep"), {
      path: "sheep",
      operations: { search: "searchSheep", lookup: "lookupSheep" },
    });
  },
);

t.test("names are sanitised to ^[A-Za-z][A-Za-z0-9_]*$ and reserved tokens suffixed", async (t) => {
  t.match(typeNamesOf("person-record"), {
    path: "person-records",
    token: "person_record",
    operations: {
      search: "searchPersonRecords",
      lookup: "lookupPersonRecord",
      changes: "getPersonRecordChanges",
    },
    components: { entry: "Entry_person_record", searchResponse: "SearchResponse_person_record" },
  });
  t.match(typeNamesOf("class"), {
    path: "classes",
    token: "class_type",
    components: { entry: "Entry_class_type" },
  });
  for (const reserved of ["default", "Interface", "type", "import", "None", "object"]) {
    t.equal(typeNamesOf(reserved).token, `${reserved}_type`, reserved);
  }
  for (const name of ["user", "person-record", "class", "x-1_y", "A"]) {
    const names = typeNamesOf(name);
    for (const value of [...Object.values(names.operations), ...Object.values(names.components)]) {
      t.match(value, /^[A-Za-z][A-Za-z0-9_]*$/, value);
    }
  }
});

t.test(
  "types that collide after singular/plural normalisation or sanitising are refused",
  async (t) => {
    t.same(
      checkTypeNames([{ name: "user" }, { name: "group" }]).map((n) => n.path),
      ["users", "groups"],
    );
    const collisions: [string, string, RegExp][] = [
      ["user", "users", /both become the REST path \/api\/entries\/users/],
      ["person", "people", /REST path \/api\/entries\/people/],
      ["my-type", "my_type", /both become the (operationId|component name)/],
      ["myType", "my-type", /operationId searchMyTypes/],
      ["class", "class_type", /component name Entry_class_type/],
    ];
    for (const [first, second, message] of collisions) {
      t.throws(
        () => checkTypeNames([{ name: first }, { name: "group" }, { name: second }]),
        { code: "ANNAL_TYPE_NAME_COLLISION", message, types: [first, second], hint: /rename one/ },
        `${first} / ${second}`,
      );
    }
    t.throws(() => checkTypeNames([{ name: "users" }, { name: "user" }]), {
      message: /"users" and "user"/,
      collidingName: "/api/entries/users",
    });
  },
);

t.test("a collision stops the server before it serves anything", async (t) => {
  const config = testConfig(`
[[directory.types]]
name = "users"
base = "ou=others,dc=example,dc=org"
`);
  const server = Fastify();
  const log = pino({ level: "silent" });
  let connected = false;
  const pool = { query: async () => ((connected = true), { rows: [] }) } as unknown as Pool;
  await t.rejects(
    async () => {
      await server.register(
        restPlugin({
          pool,
          epoch: "0123456789abcdef",
          schema: undefined,
          config,
          log,
          authentication: createAuthentication({ pool }),
        }),
      );
      await server.ready();
    },
    { code: "ANNAL_TYPE_NAME_COLLISION", message: /"user" and "users"/ },
  );
  t.notOk(connected, "refused before touching the database");
});

t.test("with [rest] enabled = false the channel serves nothing, names still checked", async (t) => {
  const server = Fastify();
  const log = pino({ level: "silent" });
  const pool = {} as Pool;
  const config = testConfig("[rest]\nenabled = false");
  await server
    .register(
      restPlugin({
        pool,
        epoch: "0123456789abcdef",
        schema: undefined,
        config,
        log,
        authentication: createAuthentication({ pool }),
      }),
    )
    .ready();
  for (const url of ["/api", "/api.json", "/api/entries/users", "/api/changes"]) {
    t.equal((await server.inject({ method: "GET", url })).statusCode, 404, url);
  }
});
