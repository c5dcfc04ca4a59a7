import type { FastifyInstance } from "fastify";
import Negotiator from "negotiator";

/** Where a new user goes from `GET /`: each path with what it is. */
const LINKS = [
  ["signIn", "/auth/login", "sign in (OpenID Connect or the directory's login form)"],
  ["app", "/app", "the web application: entries and their history, changes, workflows, operations"],
  ["docs", "/api", "REST channel: interactive documentation"],
  ["openapi", "/api.json", "REST channel: OpenAPI description"],
  ["graphql", "/graphql", "GraphQL: GraphiQL in a browser, POST for clients"],
  ["health", "/healthz", "liveness"],
  ["readiness", "/readyz", "readiness: database, migrations, projections"],
  ["metrics", "/metrics", "Prometheus metrics"],
] as const;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>annal</title>
</head>
<body>
<h1>annal</h1>
<p>An identity gateway with a complete history of the directory.</p>
<ul>
${LINKS.map(([, href, what]) => `<li><a href="${href}">${href}</a> — ${what}</li>`).join("\n")}
</ul>
</body>
</html>
`;

const CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * `GET /`: a landing page that links the documentation, GraphiQL, health and metrics, so the
 * first URL a user opens is not a 404. HTML for browsers; JSON when `Accept` prefers it.
 */
export async function landingRoutes(server: FastifyInstance): Promise<void> {
  server.get("/", (request, reply) => {
    const type = new Negotiator(request).mediaType(["text/html", "application/json"]);
    if (type === "application/json") {
      return reply.send({
        name: "annal",
        links: Object.fromEntries(LINKS.map(([name, href]) => [name, href])),
      });
    }
    return reply.type("text/html; charset=utf-8").header("content-security-policy", CSP).send(PAGE);
  });
}
