import { createReadStream } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";

const require = createRequire(import.meta.url);
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

/**
 * GraphiQL's files, served from the installed packages (no CDN: the page works offline and
 * under a strict Content-Security-Policy). Name → [file, media type].
 */
const ASSETS: Readonly<Record<string, readonly [string, string]>> = {
  "react.js": [
    path.join(packageDir("react"), "umd/react.production.min.js"),
    "text/javascript; charset=utf-8",
  ],
  "react-dom.js": [
    path.join(packageDir("react-dom"), "umd/react-dom.production.min.js"),
    "text/javascript; charset=utf-8",
  ],
  "graphiql.js": [
    path.join(packageDir("graphiql"), "graphiql.min.js"),
    "text/javascript; charset=utf-8",
  ],
  "graphiql.css": [
    path.join(packageDir("graphiql"), "graphiql.min.css"),
    "text/css; charset=utf-8",
  ],
};

/** Where the token is kept in the browser (localStorage), so it is pasted once. */
const TOKEN_KEY = "annal.graphiql.token";

const page = (assets: string, signedIn: boolean) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>annal · GraphiQL</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets}/graphiql.css">
<link rel="stylesheet" href="${assets}/annal.css">
</head>
<body${signedIn ? ' data-session="1"' : ""}>
<form id="annal-token" autocomplete="off">
  <label for="annal-token-input">Bearer token</label>
  <input id="annal-token-input" type="password" placeholder="paste a token from: annal token create --name me --access read" spellcheck="false">
  <button type="submit">Use token</button>
  <button type="button" id="annal-token-forget">Forget</button>
  <span id="annal-token-state" role="status"></span>
</form>
<div id="graphiql"></div>
<script src="${assets}/react.js"></script>
<script src="${assets}/react-dom.js"></script>
<script src="${assets}/graphiql.js"></script>
<script src="${assets}/annal.js"></script>
</body>
</html>
`;

const STYLE = `html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; font-family: system-ui, sans-serif; }
#annal-token { display: flex; gap: .5rem; align-items: center; padding: .4rem .8rem;
  border-bottom: 1px solid #ddd; font-size: 14px; }
#annal-token input { flex: 1; max-width: 36rem; font-family: monospace; padding: .2rem .4rem; }
#annal-token-state { color: #555; }
#graphiql { flex: 1; min-height: 0; }
`;

// Our page script. The token is kept in localStorage and sent as `Authorization: Bearer` by
// the fetcher. Without a token GraphiQL gets `schema: null` (no introspection, so no error);
// setting one remounts it, and GraphiQL then loads the schema and its docs. A page served to
// a browser with a session cookie (`data-session`) runs as the person without a token.
const script = (endpoint: string) => `"use strict";
(function () {
  var KEY = ${JSON.stringify(TOKEN_KEY)};
  var input = document.getElementById("annal-token-input");
  var state = document.getElementById("annal-token-state");
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  function token() {
    try { return localStorage.getItem(KEY) || ""; } catch (e) { return ""; }
  }
  function fetcher(params) {
    var headers = { "content-type": "application/json", accept: "application/json" };
    if (token()) headers.authorization = "Bearer " + token();
    return fetch(${JSON.stringify(endpoint)}, {
      method: "POST",
      headers: headers,
      body: JSON.stringify(params),
      credentials: "same-origin",
    }).then(function (response) { return response.json(); });
  }
  var session = document.body.getAttribute("data-session") === "1";
  function render() {
    var current = token();
    state.textContent = current
      ? "token set (kept in this browser)"
      : session
        ? "signed in: queries run as you (or paste a token)"
        : "paste a token to load the schema and run queries";
    var props = { fetcher: fetcher, key: current ? "with-token" : "without-token" };
    if (!current && !session) props.schema = null;
    root.render(React.createElement(GraphiQL, props));
  }
  document.getElementById("annal-token").addEventListener("submit", function (event) {
    event.preventDefault();
    var value = input.value.trim().replace(/^Bearer\\s+/i, "");
    if (!value) return;
    try { localStorage.setItem(KEY, value); } catch (e) {}
    input.value = "";
    render();
  });
  document.getElementById("annal-token-forget").addEventListener("click", function () {
    try { localStorage.removeItem(KEY); } catch (e) {}
    render();
  });
  render();
})();
`;

const CSP =
  "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/**
 * GraphiQL for `path`: the page (answered by `sendGraphiQL` when a browser opens the
 * endpoint) and its files under `<path>/assets/`, all from annal itself. The page asks for a
 * bearer token once and keeps it in the browser.
 *
 * @example
 * const graphiql = graphiqlRoutes("/graphql");
 * await server.register(graphiql.routes);
 * // in the endpoint's handler, for a browser: return graphiql.send(reply);
 */
export function graphiqlRoutes(endpoint: string) {
  const assets = `${endpoint}/assets`;
  const html = { anonymous: page(assets, false), signedIn: page(assets, true) };
  const js = script(endpoint);
  return {
    /** The page; `signedIn` when the browser sent a session cookie (it is checked by GraphQL). */
    send: (reply: FastifyReply, signedIn = false) =>
      reply
        .type("text/html; charset=utf-8")
        .header("content-security-policy", CSP)
        .header("cache-control", "no-cache")
        .send(signedIn ? html.signedIn : html.anonymous),
    routes: async (server: FastifyInstance): Promise<void> => {
      server.get(`${assets}/annal.js`, (_request, reply) =>
        reply.type("text/javascript; charset=utf-8").header("cache-control", "no-cache").send(js),
      );
      server.get(`${assets}/annal.css`, (_request, reply) =>
        reply.type("text/css; charset=utf-8").header("cache-control", "no-cache").send(STYLE),
      );
      server.get<{ Params: { file: string } }>(`${assets}/:file`, (request, reply) => {
        const asset = ASSETS[request.params.file];
        if (asset === undefined) {
          return reply.code(404).type("text/plain; charset=utf-8").send("no such GraphiQL file");
        }
        return reply
          .type(asset[1])
          .header("cache-control", "public, max-age=86400")
          .send(createReadStream(asset[0]));
      });
    },
  };
}
