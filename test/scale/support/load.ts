import { setTimeout as pause } from "node:timers/promises";
import { Attribute, Change, Client } from "ldapts";
import { signDelivery } from "../../../src/hooks/index.ts";

/**
 * The scale suite's clients: each one loops until `stop` aborts, sending one request at a
 * time to one of the API processes, and notes every outcome in `Figures`. A client keeps going
 * through failures (they are counted by kind); what a write client saw acknowledged is kept,
 * so that the invariants can check that nothing acknowledged was lost.
 */
export interface Figures {
  /** Requests answered, by client. */
  readonly served: Record<string, number>;
  /** Failures by `<client> <status> <code>` (status 0: no answer). */
  readonly errors: Record<string, number>;
  /** The longest any client waited between two answers that served it, in ms. */
  longestPauseMs: number;
  readonly longestPauseBy: { client: string; at: string };
}

export function newFigures(): Figures {
  return { served: {}, errors: {}, longestPauseMs: 0, longestPauseBy: { client: "", at: "" } };
}

export interface LoadTarget {
  /** The API processes' URLs now (they change when one is restarted on another port). */
  apiUrls(): readonly string[];
  readonly token: string;
  readonly webhookSecret: string;
  readonly ldap: { url: string; bindDN: string; password: string };
}

/** The change feed as one client walked it by cursor, page after page, across the whole run. */
export interface FeedWalk {
  cursor: string | undefined;
  /** Every change id the feed served, in the order served. */
  readonly changeIds: string[];
}

/** Reads the feed's next page after `walk.cursor`; how many changes it served (-1: refused). */
export async function walkFeed(url: string, token: string, walk: FeedWalk): Promise<number> {
  const after = walk.cursor === undefined ? "" : `&after=${encodeURIComponent(walk.cursor)}`;
  const response = await fetch(`${url}/api/changes?include=nodes,pageInfo&first=200${after}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok) return -1;
  const body = (await response.json()) as {
    nodes: { changeId: string }[];
    pageInfo: { endCursor: string | null };
  };
  for (const node of body.nodes) walk.changeIds.push(node.changeId);
  if (body.pageInfo.endCursor !== null) walk.cursor = body.pageInfo.endCursor;
  return body.nodes.length;
}

/** What the write clients saw acknowledged. */
export interface Acknowledged {
  /** Webhook event ids answered 202. */
  readonly deliveries: string[];
  /** Titles a GraphQL mutation answered with. */
  readonly titles: string[];
  /** Descriptions set with ldapmodify outside annal. */
  readonly descriptions: string[];
}

export const GRAPHQL_WRITE_DN = "uid=prossi,ou=engineering,ou=people,dc=example,dc=org";
export const OUTSIDE_WRITE_DN = "uid=owojcik,ou=engineering,ou=people,dc=example,dc=org";
/** Subjects the webhook deliveries spread over (each subject's run one at a time). */
export const SUBJECTS = 12;

export type Attempt = () => Promise<{ ok: boolean; status: number; code: string }>;

export async function loop(
  name: string,
  figures: Figures,
  stop: AbortSignal,
  attempt: Attempt,
): Promise<void> {
  let lastServed = Date.now();
  figures.served[name] = 0;
  while (!stop.aborted) {
    let outcome: { ok: boolean; status: number; code: string };
    try {
      outcome = await attempt();
    } catch (error) {
      // fetch's TypeError says little: its cause names the socket's failure (ECONNREFUSED).
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      outcome = { ok: false, status: 0, code: cause ?? ((error as Error).name || "Error") };
    }
    const now = Date.now();
    if (outcome.ok) {
      figures.served[name]!++;
      if (now - lastServed > figures.longestPauseMs) {
        figures.longestPauseMs = now - lastServed;
        figures.longestPauseBy.client = name;
        figures.longestPauseBy.at = new Date(now).toISOString();
      }
      lastServed = now;
    } else {
      const kind = `${name} ${outcome.status} ${outcome.code}`;
      figures.errors[kind] = (figures.errors[kind] ?? 0) + 1;
      // A client paces itself after a failure as a real one would (Retry-After is seconds).
      await pause(250, undefined, { signal: stop }).catch(() => {});
    }
  }
}

let turn = 0;
export function pick(target: LoadTarget): string {
  const urls = target.apiUrls();
  return urls[turn++ % urls.length]!;
}

async function codeOf(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as {
      code?: string;
      error?: { code?: string } | string;
      errors?: { extensions?: { annalCode?: string; code?: string } }[];
    };
    return (
      body.code ??
      (typeof body.error === "object" ? body.error.code : body.error) ??
      body.errors?.[0]?.extensions?.annalCode ??
      body.errors?.[0]?.extensions?.code ??
      "-"
    );
  } catch {
    return "-";
  }
}

/** One GraphQL request to one of the API processes, as the load's clients send it. */
export async function graphqlRequest(
  target: LoadTarget,
  query: string,
  variables?: Record<string, unknown>,
): Promise<{
  ok: boolean;
  status: number;
  code: string;
  body: { data?: Record<string, unknown> | null; errors?: unknown[] };
}> {
  const url = pick(target);
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${target.token}`,
      "content-type": "application/json",
      accept: "application/graphql-response+json",
      origin: url,
    },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const body = JSON.parse(text) as { data?: Record<string, unknown>; errors?: unknown[] };
  const ok = response.ok && body.errors === undefined;
  return { ok, status: response.status, body, code: ok ? "" : await codeOf(new Response(text)) };
}

/** Starts every client; resolves when `stop` aborts and each has finished its request. */
export function runLoad(
  target: LoadTarget,
  stop: AbortSignal,
  figures: Figures,
  acknowledged: Acknowledged,
  feed: FeedWalk,
): Promise<void> {
  const bearer = { authorization: `Bearer ${target.token}` };
  const timeout = () => AbortSignal.timeout(30_000);
  const restRead: Attempt = async () => {
    const response = await fetch(`${pick(target)}/api/entries/users?limit=20`, {
      headers: bearer,
      signal: timeout(),
    });
    if (response.ok) await response.arrayBuffer();
    return {
      ok: response.ok,
      status: response.status,
      code: response.ok ? "" : await codeOf(response),
    };
  };
  const graphql = (query: string) => graphqlRequest(target, query);
  const graphqlRead: Attempt = () => graphql("{ people(first: 10) { nodes { uid } } }");
  let title = 0;
  const graphqlWrite: Attempt = async () => {
    const value = `gql-${++title}`;
    const outcome = await graphql(
      `mutation { updatePerson(dn: "${GRAPHQL_WRITE_DN}", input: [{ operation: replace, changes: { title: "${value}" } }]) { title } }`,
    );
    if (outcome.ok) acknowledged.titles.push(value);
    return outcome;
  };
  let delivery = 0;
  const webhook: Attempt = async () => {
    const n = ++delivery;
    const id = `w-${n}`;
    const payload = JSON.stringify({
      id,
      person: `s-${n % SUBJECTS}`,
      at: new Date().toISOString(),
    });
    const webhookId = `msg_${id}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const response = await fetch(`${pick(target)}/-hooks/crm/people`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": webhookId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signDelivery(target.webhookSecret, webhookId, timestamp, payload),
      },
      body: payload,
      signal: timeout(),
    });
    if (response.status === 202) acknowledged.deliveries.push(id);
    return {
      ok: response.status === 202,
      status: response.status,
      code: response.status === 202 ? "" : await codeOf(response),
    };
  };
  let description = 0;
  const ldap = new Client({ url: target.ldap.url, timeout: 10_000, connectTimeout: 5_000 });
  let bound = false;
  const outside: Attempt = async () => {
    const value = `ext-${++description}`;
    try {
      if (!bound) {
        await ldap.bind(target.ldap.bindDN, target.ldap.password);
        bound = true;
      }
      await ldap.modify(
        OUTSIDE_WRITE_DN,
        new Change({
          operation: "replace",
          modification: new Attribute({ type: "description", values: [value] }),
        }),
      );
    } catch (error) {
      bound = false;
      await ldap.unbind().catch(() => {});
      return { ok: false, status: 0, code: (error as Error).name };
    }
    acknowledged.descriptions.push(value);
    // Another system's pace, not a flood: about 5 changes a second.
    await pause(200, undefined, { signal: stop }).catch(() => {});
    return { ok: true, status: 200, code: "" };
  };
  const feedReader: Attempt = async () => {
    const served = await walkFeed(pick(target), target.token, feed);
    return { ok: served >= 0, status: served >= 0 ? 200 : 503, code: served >= 0 ? "" : "-" };
  };
  return Promise.all([
    loop("rest-read", figures, stop, restRead),
    loop("feed-walk", figures, stop, feedReader),
    loop("rest-read-2", figures, stop, restRead),
    loop("graphql-read", figures, stop, graphqlRead),
    loop("graphql-write", figures, stop, graphqlWrite),
    loop("webhook", figures, stop, webhook),
    loop("ldapmodify", figures, stop, outside),
  ]).then(async () => {
    await ldap.unbind().catch(() => {});
  });
}

/** Resolves at `moment` (ms since the epoch), or at once when `stop` aborts: the fault schedule. */
export async function until(moment: number, stop?: AbortSignal): Promise<void> {
  const left = moment - Date.now();
  if (left > 0) await pause(left, undefined, stop ? { signal: stop } : {}).catch(() => {});
}
