/**
 * Scripted sign-in: what a person does in a browser on annal's sign-in page with "Sign in with
 * demo-sso", done over plain HTTP. annal's `/auth/login/oidc` sends the client to the OpenID
 * provider (the authorization-code flow), whose form takes the login and password, and the
 * provider's redirects lead back to annal's callback, which sets the `service_session` cookie.
 * Nothing is shortcut: the same requests, cookies and redirects as a browser's.
 */
import { AnnalError } from "../errors/index.ts";

/** A session annal gave: the `Cookie` header value that makes requests as the person. */
export interface SignedIn {
  readonly cookie: string;
}

/** Redirects followed at most, from annal to the provider and back. */
const MAX_HOPS = 20;

/**
 * Signs in to the annal at `base` as `login` through its OpenID origin.
 *
 * @example
 * const { cookie } = await signInThroughPage("http://127.0.0.1:4173", "prossi", "demo");
 * await fetch("http://127.0.0.1:4173/graphql", { method: "POST", headers: { cookie, ... } });
 *
 * @throws AnnalError `ANNAL_LOGIN_FAILED` naming the step that did not go as a browser's would
 *   (annal offers no OpenID sign-in, the provider refused the password, no session came back).
 */
export async function signInThroughPage(
  base: string,
  login: string,
  password: string,
): Promise<SignedIn> {
  const jar = new CookieJar();
  const origin = new URL(base).origin;
  let { response, url } = await follow(jar, new URL("/auth/login/oidc", base).href);
  if (new URL(url).origin !== origin) {
    const page = await response.text();
    const action = /<form[^>]*\baction="([^"]+)"/.exec(page)?.[1];
    if (response.status !== 200 || action === undefined) {
      throw failed(`the provider at ${new URL(url).origin} showed no sign-in form`, response);
    }
    const posted = await jar.request(new URL(unescapeHtml(action), url).href, {
      method: "POST",
      body: new URLSearchParams({ login, password }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    if (posted.status < 300 || posted.status >= 400) {
      const why = /class="error"[^>]*>([^<]+)</.exec(await posted.text())?.[1];
      throw failed(`the provider refused ${login}${why ? `: ${why}` : ""}`, posted);
    }
    ({ response, url } = await follow(jar, new URL(posted.headers.get("location")!, url).href));
  }
  const session = jar.get(new URL(base).host, "service_session");
  if (session === undefined || new URL(url).origin !== origin || response.status >= 400) {
    throw failed(`annal gave ${login} no session (the sign-in ended at ${url})`, response);
  }
  return { cookie: `service_session=${session}` };
}

function failed(message: string, response: Response): AnnalError {
  return new AnnalError("ANNAL_LOGIN_FAILED", `${message} (HTTP ${response.status})`);
}

/** Follows redirects with GET, as a browser does after a 302 or 303. */
async function follow(jar: CookieJar, start: string): Promise<{ response: Response; url: string }> {
  let url = start;
  let response = await jar.request(url);
  for (let hop = 0; hop < MAX_HOPS && response.status >= 300 && response.status < 400; hop++) {
    url = new URL(response.headers.get("location") ?? "", url).href;
    response = await jar.request(url);
  }
  return { response, url };
}

function unescapeHtml(text: string): string {
  return text.replaceAll("&amp;", "&").replaceAll("&#x2F;", "/").replaceAll("&#47;", "/");
}

/**
 * Cookies by host and name, as the two sites set them: enough for one sign-in (no paths,
 * no expiry but removal; both sites are on loopback addresses that differ by port, and a
 * cookie is sent back to the host and port that set it).
 */
class CookieJar {
  readonly #byHost = new Map<string, Map<string, string>>();

  get(host: string, name: string): string | undefined {
    return this.#byHost.get(host)?.get(name);
  }

  async request(
    url: string,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const target = new URL(url);
    const cookies = this.#byHost.get(target.host) ?? new Map<string, string>();
    const header = [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    let response: Response;
    try {
      response = await fetch(target, {
        method: init.method ?? "GET",
        redirect: "manual",
        headers: { ...(header === "" ? {} : { cookie: header }), ...init.headers },
        ...(init.body === undefined ? {} : { body: init.body }),
      });
    } catch (error) {
      throw new AnnalError(
        "ANNAL_LOGIN_FAILED",
        `could not reach ${target.origin}: ${(error as Error).message}`,
        { hint: "is annal running, with its OpenID provider? annal status says", cause: error },
      );
    }
    for (const set of response.headers.getSetCookie()) {
      const pair = set.split(";")[0]!;
      const equals = pair.indexOf("=");
      const name = pair.slice(0, equals).trim();
      const removed = /max-age=0/i.test(set) || /expires=Thu, 01 Jan 1970/i.test(set);
      if (removed) cookies.delete(name);
      else cookies.set(name, pair.slice(equals + 1).trim());
    }
    this.#byHost.set(target.host, cookies);
    return response;
  }
}
