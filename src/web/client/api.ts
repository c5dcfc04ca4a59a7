/**
 * annal's public APIs as the web application calls them: GraphQL (`POST /graphql`) and the
 * REST channel (`/api`), both with the `service_session` cookie the browser sends itself.
 */

/** A refusal from annal: its stable code, message and hint, as the API gave them. */
export class ApiError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly status: number;
  /**
   * annal could not confirm the person's authority with their identity provider (its refresh
   * was refused or it did not answer): signing in again is what mends it.
   */
  readonly signInAgain: boolean;
  constructor(code: string, message: string, status: number, hint?: string, signInAgain = false) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.hint = hint;
    this.signInAgain = signInAgain;
  }
}

/** Where signing in again starts, to come back to this page. */
export function signInUrl(): string {
  return `/auth/login?returnTo=${encodeURIComponent(location.pathname + location.search)}`;
}

/** A signed-out browser goes to sign-in, and comes back to the page it was on. */
export function toSignIn(): never {
  location.assign(signInUrl());
  throw new ApiError("UNAUTHENTICATED", "not signed in", 401);
}

/**
 * A request that could not reach annal (the network is down, the server stopped): a banner at
 * the top of every page says so until a request gets through again, and the request fails
 * with `CONNECTION_LOST` instead of the browser's bare `Failed to fetch`.
 */
async function reach(input: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(input, init);
  } catch (error) {
    if (init.signal?.aborted) throw error;
    connectionBanner(true);
    throw new ApiError(
      "CONNECTION_LOST",
      "annal cannot be reached: the connection to the server is lost",
      0,
      "check your network; once annal answers, the banner goes and the page can be loaded again",
    );
  }
  connectionBanner(false);
  return response;
}

/** While the banner shows, how often annal is asked whether it answers again. */
const RECONNECT_MS = 3000;

let reconnecting: ReturnType<typeof setInterval> | undefined;

function connectionBanner(lost: boolean): void {
  const existing = document.getElementById("connection-lost");
  if (!lost) {
    existing?.remove();
    clearInterval(reconnecting);
    reconnecting = undefined;
    return;
  }
  if (existing) return;
  // The banner goes once annal answers again, whether or not the page asks for anything.
  const check = () =>
    void fetch("/healthz", { cache: "no-store" }).then(
      (response) => response.ok && connectionBanner(false),
      () => undefined,
    );
  reconnecting = setInterval(check, RECONNECT_MS);
  window.addEventListener("online", check, { once: true });
  const banner = document.createElement("div");
  banner.id = "connection-lost";
  banner.className = "banner";
  banner.setAttribute("role", "alert");
  banner.textContent =
    "Connection lost: annal cannot be reached. What you see may be out of date; this banner goes away once annal answers again.";
  document.getElementById("top")?.append(banner);
}

interface GraphqlAnswer<T> {
  data?: T;
  errors?: {
    message: string;
    extensions?: { code?: string; hint?: string; signInAgain?: boolean };
  }[];
}

/** One GraphQL operation; the first error is thrown as an `ApiError` with its code. */
export async function gql<T>(query: string, variables?: Record<string, unknown>): Promise<T> {
  const response = await reach("/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(variables ? { query, variables } : { query }),
  });
  const answer = (await response.json()) as GraphqlAnswer<T>;
  const error = answer.errors?.[0];
  if (error) {
    const code = error.extensions?.code ?? "GRAPHQL_ERROR";
    if (code === "UNAUTHENTICATED") toSignIn();
    throw new ApiError(
      code,
      error.message,
      response.status,
      error.extensions?.hint,
      error.extensions?.signInAgain === true,
    );
  }
  return answer.data as T;
}

interface Problem {
  code?: string;
  title?: string;
  detail?: string;
  message?: string;
  hint?: string;
  signInAgain?: boolean;
}

/** A REST (or status) request answered in JSON; a problem body is thrown as an `ApiError`. */
export async function rest<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await reach(path, {
    ...init,
    headers: { accept: "application/json", ...init.headers },
  });
  if (response.status === 401) toSignIn();
  const text = await response.text();
  const body = text ? (JSON.parse(text) as unknown) : undefined;
  if (!response.ok) {
    const problem = (body ?? {}) as Problem;
    throw new ApiError(
      problem.code ?? `HTTP_${response.status}`,
      problem.detail ?? problem.message ?? problem.title ?? response.statusText,
      response.status,
      problem.hint,
      problem.signInAgain === true,
    );
  }
  return body as T;
}

/** A query string from the defined values of `params`. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
