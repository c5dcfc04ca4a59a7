import { connect } from "node:net";
import t from "tap";
import { AnnalError, PROBLEM_CONTENT_TYPE } from "../../src/errors/index.ts";
import { createPool } from "../../src/db/index.ts";
import { testServer } from "./support.ts";

// No route here touches the database: a pool that is never used.
const pool = createPool("postgres://nobody@127.0.0.1:1/none", 1);
t.teardown(() => pool.end());

t.test("an AnnalError answers its status with a problem+json body carrying its code", async (t) => {
  const { server } = testServer(t, { pool });
  server.get("/conflict", async () => {
    throw new AnnalError("ANNAL_CONFLICT", "the entry changed meanwhile", {
      status: 409,
      hint: "read it again",
    });
  });
  const response = await server.inject({ method: "GET", url: "/conflict" });
  t.equal(response.statusCode, 409);
  t.equal(response.headers["content-type"], PROBLEM_CONTENT_TYPE);
  t.same(response.json(), {
    type: "urn:annal:problem:ANNAL_CONFLICT",
    title: "Conflict",
    status: 409,
    detail: "the entry changed meanwhile",
    code: "ANNAL_CONFLICT",
    hint: "read it again",
  });
});

t.test(
  "an unexpected error is a 500 ANNAL_INTERNAL that leaks nothing, and is logged",
  async (t) => {
    const { server, logged } = testServer(t, { pool });
    server.get("/bug", async () => {
      throw new Error("relation users_secret_table does not exist");
    });
    const response = await server.inject({ method: "GET", url: "/bug" });
    t.equal(response.statusCode, 500);
    t.equal(response.headers["content-type"], PROBLEM_CONTENT_TYPE);
    const body = response.json();
    t.equal(body.code, "ANNAL_INTERNAL");
    t.notMatch(response.body, /users_secret_table|stack|Error:/);
    t.ok(body.requestId, "names the request, to find the log");
    const entry = logged.lines.find((line) => line.msg === "request failed");
    t.match(entry, { level: "error", reqId: body.requestId });
    t.match((entry?.err as { message: string }).message, /users_secret_table/);
  },
);

t.test("an unknown route is 404 ANNAL_NOT_FOUND, without echoing the query", async (t) => {
  const { server } = testServer(t, { pool });
  const response = await server.inject({ method: "GET", url: "/nowhere?token=abc" });
  t.equal(response.statusCode, 404);
  t.equal(response.headers["content-type"], PROBLEM_CONTENT_TYPE);
  t.match(response.json(), { code: "ANNAL_NOT_FOUND", status: 404, title: "Not Found" });
  t.notMatch(response.body, /abc/);
});

t.test("Fastify's own client errors get stable codes and details of ours", async (t) => {
  const { server } = testServer(t, { pool });
  server.post("/echo", { bodyLimit: 64 }, async (request) => request.body);
  server.get("/things/:id", async () => ({}));

  const badJson = await server.inject({
    method: "POST",
    url: "/echo",
    headers: { "content-type": "application/json" },
    payload: '{"password": "hunter2",',
  });
  t.equal(badJson.statusCode, 400);
  t.match(badJson.json(), {
    code: "ANNAL_BAD_REQUEST",
    detail: "the request body is not valid JSON",
  });
  t.notMatch(badJson.body, /hunter2/, "the body is not echoed");

  const tooLarge = await server.inject({
    method: "POST",
    url: "/echo",
    headers: { "content-type": "application/json" },
    payload: JSON.stringify({ text: "x".repeat(200) }),
  });
  t.equal(tooLarge.statusCode, 413);
  t.match(tooLarge.json(), { code: "ANNAL_BODY_TOO_LARGE" });

  const wrongType = await server.inject({
    method: "POST",
    url: "/echo",
    headers: { "content-type": "application/x-unknown" },
    payload: "hello",
  });
  t.equal(wrongType.statusCode, 415);
  t.match(wrongType.json(), { code: "ANNAL_UNSUPPORTED_MEDIA_TYPE" });

  const badUrl = await server.inject({ method: "GET", url: "/things/%E0%A4%A" });
  t.equal(badUrl.statusCode, 400);
  t.equal(badUrl.headers["content-type"], PROBLEM_CONTENT_TYPE);
  t.match(badUrl.json(), { code: "ANNAL_BAD_REQUEST", detail: "the request URL is not valid" });
});

t.test("a 4xx raised by a plugin keeps its status and gets a code for it", async (t) => {
  const { server } = testServer(t, { pool });
  server.get("/limited", async () => {
    throw Object.assign(new Error("Rate limit exceeded, retry in 1 minute"), { statusCode: 429 });
  });
  const response = await server.inject({ method: "GET", url: "/limited" });
  t.equal(response.statusCode, 429);
  t.match(response.json(), {
    code: "ANNAL_RATE_LIMITED",
    detail: "Rate limit exceeded, retry in 1 minute",
  });
});

/** Writes `request` on a socket as it is and reads the whole answer until the server closes. */
async function rawExchange(url: string, request: string) {
  const { hostname, port } = new URL(url);
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.end(request);
  });
  const [head = "", body = ""] = text.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), head, body };
}

t.test(
  "what Node's parser refuses is problem+json too: a long URL 414, large headers 431, garbage 400",
  async (t) => {
    const { server } = testServer(t, { pool });
    server.get("/here", async () => ({ ok: true }));
    const url = await server.listen({ host: "127.0.0.1", port: 0 });
    // Under Node's header limit, over annal's URL limit: the hook.
    const hooked = await server.inject({ method: "GET", url: `/here?q=${"x".repeat(17_000)}` });
    t.equal(hooked.statusCode, 414);
    t.equal(hooked.headers["content-type"], PROBLEM_CONTENT_TYPE);
    t.match(hooked.json(), { code: "ANNAL_URI_TOO_LONG", status: 414 });
    // Over Node's header limit: the parser, where Fastify's default answered a bare 431.
    const parsed = await rawExchange(
      url,
      `GET /here?q=${"x".repeat(40_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    t.equal(parsed.status, 414);
    t.match(parsed.head, /content-type: application\/problem\+json/i);
    t.match(JSON.parse(parsed.body), { code: "ANNAL_URI_TOO_LONG", status: 414 });
    const headers = await rawExchange(
      url,
      `GET /here HTTP/1.1\r\nHost: x\r\nCookie: c=${"x".repeat(40_000)}\r\n\r\n`,
    );
    t.equal(headers.status, 431);
    t.match(JSON.parse(headers.body), { code: "ANNAL_HEADERS_TOO_LARGE", status: 431 });
    const garbage = await rawExchange(url, "NOT HTTP AT ALL\r\n\r\n");
    t.equal(garbage.status, 400);
    t.match(JSON.parse(garbage.body), { code: "ANNAL_BAD_REQUEST" });
    const fine = await server.inject({ method: "GET", url: `/here?q=${"x".repeat(16_000)}` });
    t.equal(fine.statusCode, 200, "a URL within the limit is served");
  },
);
