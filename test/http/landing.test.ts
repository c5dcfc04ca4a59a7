import t from "tap";
import { testDatabase } from "../support/postgres.ts";
import { testServer } from "./support.ts";

t.test("GET / is a landing page linking the docs, GraphiQL and health", async (t) => {
  const { pool } = await testDatabase(t);
  const { server } = testServer(t, { pool });
  const html = await server.inject({ method: "GET", url: "/", headers: { accept: "text/html" } });
  t.equal(html.statusCode, 200);
  t.match(html.headers["content-type"], /^text\/html/);
  for (const href of [
    "/auth/login",
    "/app",
    "/api",
    "/graphql",
    "/healthz",
    "/readyz",
    "/metrics",
  ]) {
    t.match(html.body, `href="${href}"`, `links ${href}`);
  }
  const bare = await server.inject({ method: "GET", url: "/" });
  t.match(bare.headers["content-type"], /^text\/html/, "a browser's default: HTML");

  const json = await server.inject({
    method: "GET",
    url: "/",
    headers: { accept: "application/json" },
  });
  t.equal(json.statusCode, 200);
  t.match(json.json(), {
    name: "annal",
    links: {
      signIn: "/auth/login",
      app: "/app",
      docs: "/api",
      openapi: "/api.json",
      graphql: "/graphql",
      health: "/healthz",
      readiness: "/readyz",
      metrics: "/metrics",
    },
  });
});
