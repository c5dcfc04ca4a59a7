/**
 * A browser without a browser, for sign-in tests over real HTTP: `fetch` with a cookie jar
 * per host and redirects followed by hand (so each hop can be looked at). Cookies are kept
 * by name and host; `Max-Age=0` removes one.
 */
export class Browserless {
  readonly jar = new Map<string, Map<string, string>>();
  /** Every `Set-Cookie` header seen, as sent. */
  readonly setCookies: string[] = [];

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  setCookie(host: string, name: string, value: string | undefined): void {
    const cookies = this.jar.get(host) ?? new Map<string, string>();
    if (value === undefined) cookies.delete(name);
    else cookies.set(name, value);
    this.jar.set(host, cookies);
  }

  /** One request, no redirect followed; cookies sent and kept. */
  async request(
    url: string,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const target = new URL(url);
    const cookies = [...(this.jar.get(target.host) ?? new Map()).entries()]
      .map(([name, value]) => `${name}=${value}`)
      .join("; ");
    const response = await fetch(target, {
      method: init.method ?? "GET",
      redirect: "manual",
      headers: { ...(cookies ? { cookie: cookies } : {}), ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body }),
    });
    for (const header of response.headers.getSetCookie()) {
      this.setCookies.push(header);
      const [pair] = header.split(";");
      const equals = pair!.indexOf("=");
      const name = pair!.slice(0, equals).trim();
      const value = pair!.slice(equals + 1).trim();
      const removed = /max-age=0/i.test(header) || /expires=Thu, 01 Jan 1970/i.test(header);
      this.setCookie(target.host, name, removed ? undefined : value);
    }
    return response;
  }

  /** Follows redirects (GET after each) until an answer that is not one; every hop's URL. */
  async follow(
    url: string,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<{ response: Response; hops: string[] }> {
    const hops = [url];
    let response = await this.request(url, init);
    for (let i = 0; i < 20 && response.status >= 300 && response.status < 400; i++) {
      const next = new URL(response.headers.get("location")!, hops.at(-1)).href;
      hops.push(next);
      response = await this.request(next);
    }
    return { response, hops };
  }
}

/** A form body. */
export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/**
 * Signs in through annal's OpenID origin as a person of the demo directory: annal's
 * `/auth/login/oidc`, the provider's form, back to annal's callback. Returns the last answer
 * and the hops; `stopAtCallback` leaves the provider's redirect to the callback unfollowed.
 */
export async function signInWithOidc(
  browser: Browserless,
  base: string,
  login: string,
  password: string,
  options: { stopAtCallback?: boolean } = {},
): Promise<{ response: Response; hops: string[]; callback?: string }> {
  const started = await browser.follow(`${base}/auth/login/oidc`);
  const page = await started.response.text();
  const landed = started.hops.at(-1)!;
  // Back at annal without a form: the provider remembered the person (single sign-on).
  if (new URL(landed).origin === new URL(base).origin) {
    return {
      response: new Response(page, { status: started.response.status }),
      hops: started.hops,
    };
  }
  const action = /action="([^"]+)"/.exec(page)?.[1];
  if (!action) throw new Error(`no provider form at ${landed}: ${page.slice(0, 300)}`);
  const providerUrl = new URL(action, started.hops.at(-1)).href;
  const posted = await browser.request(providerUrl, {
    method: "POST",
    body: form({ login, password }),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  if (posted.status !== 303) return { response: posted, hops: [...started.hops, providerUrl] };
  // The provider sends the browser on through its own endpoints, then to annal's callback.
  let next = new URL(posted.headers.get("location")!, providerUrl).href;
  const hops = [...started.hops, providerUrl, next];
  let response = await browser.request(next);
  while (response.status >= 300 && response.status < 400) {
    next = new URL(response.headers.get("location")!, next).href;
    hops.push(next);
    if (options.stopAtCallback && new URL(next).pathname === "/auth/callback") {
      return { response, hops, callback: next };
    }
    response = await browser.request(next);
  }
  return { response, hops };
}
