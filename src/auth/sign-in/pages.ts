/**
 * The sign-in pages: plain HTML of annal's own, no script, no resource from elsewhere, and a
 * policy that says so. Every value shown is escaped.
 */

export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · annal</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem; color: #1d2733; }
h1 { font-size: 1.5rem; }
form, .box { border: 1px solid #cdd6e0; border-radius: 8px; padding: 1rem 1.25rem; margin: 1rem 0; }
label { display: block; margin: .5rem 0 .25rem; }
input[type=text], input[type=password] { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
button, a.button { display: inline-block; margin-top: .75rem; padding: .5rem 1rem; font: inherit; border: 0; border-radius: 6px; background: #2458a6; color: white; text-decoration: none; cursor: pointer; }
.error { border-color: #c0392b; background: #fdf1ef; }
code { background: #eef2f6; padding: 0 .25rem; border-radius: 3px; }
small { color: #5b6b7c; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

export interface LoginPageOptions {
  /** The OpenID origin's name, when one is configured. */
  readonly oidc?: string;
  /** Whether the LDAP form is offered. */
  readonly ldap: boolean;
  readonly returnTo: string;
  /** An error of a sign-in that just failed, shown above the form. */
  readonly error?: { readonly code: string; readonly message: string; readonly hint?: string };
  /** The login typed before, kept in the form after a failure (never the password). */
  readonly login?: string;
}

/** `GET /auth/login`: the ways to sign in that are configured. */
export function loginPage(options: LoginPageOptions): string {
  const returnTo = encodeURIComponent(options.returnTo);
  const parts = [`<h1>Sign in to annal</h1>`];
  if (options.error) parts.push(errorBox(options.error));
  if (options.oidc !== undefined) {
    parts.push(`<div class="box" id="oidc">
<p>With your organisation's account:</p>
<a class="button" id="sign-in-oidc" href="/auth/login/oidc?returnTo=${returnTo}">Sign in with ${escapeHtml(options.oidc)}</a>
</div>`);
  }
  if (options.ldap) {
    parts.push(`<form method="post" action="/auth/login/ldap" id="ldap">
<p>With your directory login:</p>
<input type="hidden" name="returnTo" value="${escapeHtml(options.returnTo)}">
<label for="login">Login</label>
<input type="text" id="login" name="login" autocomplete="username" required value="${escapeHtml(options.login ?? "")}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`);
  }
  if (options.oidc === undefined && !options.ldap) {
    parts.push(
      `<p class="box">No way of signing in is configured: add <code>[auth.oidc]</code> or <code>[auth.ldap]</code> to annal.toml.</p>`,
    );
  }
  return page("Sign in", parts.join("\n"));
}

function errorBox(error: { code: string; message: string; hint?: string }): string {
  return `<div class="box error" role="alert" id="error">
<p><strong>${escapeHtml(error.message)}</strong></p>
${error.hint ? `<p>${escapeHtml(error.hint)}</p>` : ""}
<p><small><code>${escapeHtml(error.code)}</code></small></p>
</div>`;
}

/** A sign-in that failed where no form can be shown again (the provider's callback). */
export function errorPage(error: {
  code: string;
  message: string;
  hint?: string | undefined;
  requestId?: string;
}): string {
  return page(
    "Sign-in failed",
    `<h1>Sign-in failed</h1>
${errorBox({ code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) })}
${error.requestId ? `<p><small>request ${escapeHtml(error.requestId)}</small></p>` : ""}
<p><a href="/auth/login">Sign in again</a></p>`,
  );
}

/** `GET /auth/session`: who is signed in, and a way out. */
export function sessionPage(who: {
  name: string;
  displayName?: string | undefined;
  origin: string;
}): string {
  return page(
    "Signed in",
    `<h1>Signed in</h1>
<div class="box" id="session">
<p>You are signed in as <strong id="who">${escapeHtml(who.displayName ?? who.name)}</strong>
(<code>${escapeHtml(who.name)}</code>, origin <code>${escapeHtml(who.origin)}</code>).</p>
<p><a href="/graphql">GraphQL</a> · <a href="/api">REST channel</a></p>
</div>
<form method="post" action="/auth/logout"><button type="submit">Sign out</button></form>`,
  );
}

/** After `POST /auth/logout`. */
export function signedOutPage(): string {
  return page(
    "Signed out",
    `<h1>Signed out</h1><p>Your session has ended.</p><p><a href="/auth/login">Sign in again</a></p>`,
  );
}
