import "./styles.css";
import { errorBox, fill, h } from "./dom.ts";
import { delegationsPage } from "./pages/delegations.ts";
import { directorySearch, entryPage } from "./pages/directory.ts";
import { feedPage } from "./pages/feed.ts";
import { historyPage, prefetchHistory } from "./pages/history.ts";
import { operationsPage } from "./pages/operations.ts";
import { inboxPage } from "./pages/inbox.ts";
import { instancePage } from "./pages/instance.ts";
import { instancesPage } from "./pages/instances.ts";
import { reviewProgressPage, reviewsPage } from "./pages/review-campaigns.ts";
import { reviewInboxPage } from "./pages/reviews.ts";
import { catalogPage, startPage } from "./pages/start.ts";
import { matchRoute, navigate, type Route } from "./router.ts";
import { allowNameLookups } from "./names.ts";
import { loadViewer, type Viewer } from "./viewer.ts";

const READ = ["read"];

/** Every page, most specific first. */
const ROUTES: readonly Route[] = [
  { path: "/app/directory", access: READ, render: directorySearch },
  {
    path: "/app/directory/:type/:id/history",
    access: READ,
    render: historyPage,
    prefetch: prefetchHistory,
  },
  { path: "/app/directory/:type/:id", access: READ, render: entryPage },
  { path: "/app/changes", access: READ, render: feedPage },
  { path: "/app/inbox", render: inboxPage },
  { path: "/app/inbox/reviews", render: reviewInboxPage },
  { path: "/app/reviews", render: reviewsPage },
  { path: "/app/reviews/:id", render: reviewProgressPage },
  { path: "/app/delegations", render: delegationsPage },
  { path: "/app/workflows", render: catalogPage },
  { path: "/app/workflows/:name", render: startPage },
  { path: "/app/instances", render: instancesPage },
  { path: "/app/instances/:id", render: instancePage },
  { path: "/app/operations", access: ["operator"], render: operationsPage },
];

/** The navigation: only what the viewer's access lets them use. */
const NAV: readonly { href: string; label: string; access?: readonly string[] }[] = [
  { href: "/app/directory", label: "Directory", access: READ },
  { href: "/app/changes", label: "Changes", access: READ },
  { href: "/app/inbox", label: "Inbox" },
  { href: "/app/delegations", label: "Delegations" },
  { href: "/app/reviews", label: "Reviews" },
  { href: "/app/workflows", label: "Start" },
  { href: "/app/instances", label: "Instances" },
  { href: "/app/operations", label: "Operations", access: ["operator"] },
];

const allowed = (viewer: Viewer, access: readonly string[] | undefined) =>
  !access || access.some((name) => viewer.access.has(name));

function header(viewer: Viewer): HTMLElement[] {
  return [
    h("a", { class: "brand", href: "/app" }, "annal"),
    h(
      "nav",
      { "aria-label": "Main", id: "nav" },
      h(
        "ul",
        null,
        ...NAV.filter((item) => allowed(viewer, item.access)).map((item) =>
          h("li", null, h("a", { href: item.href }, item.label)),
        ),
      ),
    ),
    h(
      "form",
      { class: "who", method: "post", action: "/auth/logout" },
      h("span", { id: "who", title: viewer.dn ?? viewer.name }, viewer.displayName),
      h("button", { type: "submit", class: "link" }, "Sign out"),
    ),
  ];
}

function markCurrent(pathname: string): void {
  for (const a of document.querySelectorAll<HTMLAnchorElement>("#nav a")) {
    const here = pathname === a.pathname || pathname.startsWith(`${a.pathname}/`);
    if (here) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

let leave: AbortController | undefined;

async function render(viewer: Viewer): Promise<void> {
  const main = document.getElementById("main")!;
  leave?.abort();
  leave = new AbortController();
  const { pathname, search } = location;
  if (pathname === "/app" || pathname === "/app/") {
    navigate(allowed(viewer, READ) ? "/app/directory" : "/app/inbox", { replace: true });
    return;
  }
  markCurrent(pathname);
  const found = matchRoute(ROUTES, pathname);
  document.title = "annal";
  if (!found) {
    fill(
      main,
      h("h1", null, "Not found"),
      h("p", null, "No page here. The navigation above lists what there is."),
    );
  } else if (!allowed(viewer, found.route.access)) {
    fill(
      main,
      h("h1", null, "Not for you"),
      h(
        "p",
        { role: "alert" },
        `This page needs the access ${found.route.access!.join(" or ")}, which you do not hold.`,
      ),
    );
  } else {
    try {
      await found.route.render({
        params: found.params,
        query: new URLSearchParams(search),
        viewer,
        main,
        signal: leave.signal,
      });
    } catch (error) {
      main.append(errorBox(error));
    }
  }
  const heading = main.querySelector("h1");
  if (heading && document.title === "annal") document.title = `${heading.textContent} · annal`;
  main.setAttribute("data-ready", "1");
}

async function start(): Promise<void> {
  // The first page's data and the viewer at once: a long history does not wait for the viewer.
  const first = matchRoute(ROUTES, location.pathname);
  first?.route.prefetch?.(first.params);
  const viewer = await loadViewer();
  // People are named from the directory: only for a viewer who may read it.
  allowNameLookups(allowed(viewer, READ));
  fill(document.getElementById("top")!, ...header(viewer));
  // Links inside the application are followed without reloading the page.
  document.addEventListener("click", (event) => {
    const a = (event.target as Element | null)?.closest?.("a");
    if (
      !a ||
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      a.target
    )
      return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith("/app")) return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
  const draw = () => {
    document.getElementById("main")!.removeAttribute("data-ready");
    void render(viewer).then(() => {
      // Move focus to the new page for keyboard and screen reader users, not on first load;
      // a new page opens at its top (scrolling to <main> would hide it under the sticky bar).
      if (drawn++ > 0) {
        document.getElementById("main")!.focus({ preventScroll: true });
        window.scrollTo(0, 0);
      }
    });
  };
  let drawn = 0;
  window.addEventListener("popstate", draw);
  window.addEventListener("annal:navigate", draw);
  draw();
}

start().catch((error: unknown) => fill(document.getElementById("main")!, errorBox(error)));
