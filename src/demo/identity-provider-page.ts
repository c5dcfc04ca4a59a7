/** The demo OpenID provider's one page: its sign-in form, or what went wrong. */
export function interactionPage(options: { uid?: string; login?: string; error?: string }): string {
  const escape = (text: string) =>
    text.replace(
      /[&<>"']/g,
      (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
    );
  const form =
    options.uid === undefined
      ? `<p><a href="/">Start again from annal</a></p>`
      : `<form method="post" action="/interaction/${escape(options.uid)}/login" id="provider-login">
<label for="login">Login (uid)</label>
<input type="text" id="login" name="login" autocomplete="username" required autofocus value="${escape(options.login ?? "")}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo identity provider</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 26rem; margin: 4rem auto; padding: 0 1rem; color: #222; background: #f6f3ee; }
form { background: white; border: 1px solid #d8cfc2; border-radius: 8px; padding: 1rem 1.25rem; }
label { display: block; margin: .5rem 0 .25rem; }
input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
button { margin-top: .75rem; padding: .5rem 1rem; font: inherit; border: 0; border-radius: 6px; background: #7a4b12; color: white; }
.error { color: #a32013; }
</style>
</head>
<body>
<h1>Demo identity provider</h1>
<p>Sign in with a person of the demo directory.</p>
${options.error ? `<p class="error" role="alert">${escape(options.error)}</p>` : ""}
${form}
</body>
</html>
`;
}
