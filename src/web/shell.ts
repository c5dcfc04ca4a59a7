/**
 * The page every `/app` URL answers with: the web application's shell. The client reads the
 * path and draws the page; without scripts it says so.
 */
export function shellPage(assetsVersion: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>annal</title>
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="/app/assets/app.css?v=${assetsVersion}">
<script type="module" src="/app/assets/app.js?v=${assetsVersion}"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header id="top"></header>
<main id="main" tabindex="-1"><p class="loading">Loading…</p>
<noscript><p>annal's web application needs JavaScript. The REST channel (<a href="/api">/api</a>) and GraphQL (<a href="/graphql">/graphql</a>) work without it.</p></noscript>
</main>
<div id="live" class="visually-hidden" role="status" aria-live="polite"></div>
</body>
</html>
`;
}

/**
 * Scripts and styles only from annal itself; photos come as `data:` URLs built from the
 * entries' base64 values; requests only to annal's own APIs.
 */
export const SHELL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");
