import type { Viewer } from "./viewer.ts";

/** What a page is drawn with: the path's parameters, the query, the viewer, where to draw. */
export interface PageContext {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly viewer: Viewer;
  readonly main: HTMLElement;
  /** Aborted when the person leaves the page: timers and polls stop with it. */
  readonly signal: AbortSignal;
}

export interface Route {
  /** `/app/directory/:type/:id`: `:name` matches one path segment. */
  readonly path: string;
  /** The access functions the page needs (any one); none: every signed-in account. */
  readonly access?: readonly string[];
  render(context: PageContext): Promise<void> | void;
  /**
   * Asks for the page's data while the viewer is still being loaded, when the application opens
   * on this page; `render` then takes what was asked (a refusal shows there, as it would).
   */
  prefetch?(params: Readonly<Record<string, string>>): void;
}

function matcher(path: string): RegExp {
  const pattern = path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? `(?<${segment.slice(1)}>[^/]+)` : segment))
    .join("/");
  return new RegExp(`^${pattern}/?$`);
}

export function matchRoute(
  routes: readonly Route[],
  pathname: string,
): { route: Route; params: Record<string, string> } | undefined {
  for (const route of routes) {
    const match = matcher(route.path).exec(pathname);
    if (match) {
      const params: Record<string, string> = {};
      for (const [key, value] of Object.entries(match.groups ?? {})) {
        params[key] = decodeURIComponent(value);
      }
      return { route, params };
    }
  }
  return undefined;
}

/** Goes to an application path without reloading; `replace` keeps the history entry. */
export function navigate(href: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  window.dispatchEvent(new Event("annal:navigate"));
}
