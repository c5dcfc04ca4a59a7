/**
 * The URL at which annal's own HTTP server answers on this machine, from `[server] host` and
 * `port` (after `PORT`): a wildcard host (`0.0.0.0`, `::`) is reached on loopback. What the
 * command line posts to without `--url`, and what a `[[graphql.rest]] base` written as a path
 * resolves against, so both follow the configured port.
 *
 * @example
 * serverUrl({ host: "0.0.0.0", port: 8080 }); // "http://127.0.0.1:8080"
 * serverUrl({ host: "::1", port: 4173 }); // "http://[::1]:4173"
 */
export function serverUrl(server: { readonly host: string; readonly port: number }): string {
  const host =
    server.host === "0.0.0.0" || server.host === ""
      ? "127.0.0.1"
      : server.host === "::" || server.host === "[::]"
        ? "[::1]"
        : server.host.includes(":") && !server.host.startsWith("[")
          ? `[${server.host}]`
          : server.host;
  return `http://${host}:${server.port}`;
}

/**
 * `base` as written (`https://hr.example.org/api`), or a path on annal itself (`/`, `/api`)
 * made absolute against `serverUrl`, without a trailing slash.
 */
export function resolveBase(base: string, server: { host: string; port: number }): string {
  return base.startsWith("/") ? `${serverUrl(server)}${base}`.replace(/\/+$/, "") : base;
}
