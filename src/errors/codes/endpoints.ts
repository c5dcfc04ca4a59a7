import type { ErrorCodeSpec } from "./spec.ts";

/** Custom endpoints from the rules file (`[rules]`), mail (`[messaging]`) and templates (`[templating]`). */
export const ENDPOINT_CODES = {
  ANNAL_RULES_INVALID: {
    status: 500,
    meaning:
      "The rules file does not bundle, throws while it loads, or does not export `endpoints` built with `defineEndpoints`; the message names the file and the line.",
    hint: "fix the rules file; it must `export const endpoints = defineEndpoints(...)`",
    surfaces: ["startup"],
  },
  ANNAL_RULES_ROUTE_CONFLICT: {
    status: 500,
    meaning:
      "A route of the rules file would answer a path that belongs to annal (the REST channel's `/api`, `/api.json`, `/api.yaml`, `/api/entries…`, `/api/changes`, `/api/failed-work…`); the message names both.",
    hint: "choose another path for the rule's route, such as /reports/... or /self-service/...",
    surfaces: ["startup"],
  },
  ANNAL_ENDPOINT_INVALID_INPUT: {
    status: 400,
    meaning:
      "A custom endpoint's input (JSON body, form or query) does not match its schema (`vValidator`); `issues` names each path and what was expected, never the value.",
    surfaces: ["rest"],
  },
  ANNAL_ENDPOINT_HTTP_EXCEPTION: {
    status: 500,
    statusFrom: "the exception's",
    meaning:
      "A custom endpoint threw an HTTPException with a status annal has no code of its own for; it answers that status and the exception's message.",
  },
  ANNAL_ENDPOINT_GRAPHQL_FAILED: {
    status: 500,
    meaning:
      "A GraphQL document a custom endpoint ran with `query` answered errors (`errors` lists them); a refusal keeps its status (401, 403, 400), anything else is the endpoint's fault.",
    hint: "use `graphql(source, variables)` to read the errors yourself",
  },
  ANNAL_ENDPOINT_OUTSIDE_REQUEST: {
    status: 500,
    meaning:
      "A binding that belongs to a request (`viewer`, `token`, `query`, `graphql`, `log`) was used outside a request, e.g. while the rules file loads.",
  },
  ANNAL_MESSAGING_NOT_CONFIGURED: {
    status: 500,
    meaning: "A rule sent mail, but the configuration has no `[messaging]` table.",
    hint: "add [messaging.transports.smtp] with host and port to annal.toml",
  },
  ANNAL_MESSAGING_TRANSPORT_UNKNOWN: {
    status: 500,
    meaning: "`messaging.send` names a transport that `[messaging.transports]` does not define.",
  },
  ANNAL_MESSAGING_INVALID: {
    status: 500,
    meaning:
      "`messaging.send` was called without a recipient, a subject, or a body (`html`, `text` or `template`).",
  },
  ANNAL_DEMO_MAIL_CATCHER_FAILED: {
    status: 500,
    meaning:
      "The demo's mail catcher (`[messaging.demo]`) could listen neither on its port (taken) nor on a free one instead.",
    hint: "stop what listens on the port, or set [messaging.demo] port (SMTP_PORT in the demo) to a free one",
    surfaces: ["startup"],
  },
  ANNAL_TEMPLATING_NOT_CONFIGURED: {
    status: 500,
    meaning: "A rule rendered a template, but the configuration has no `[templating]` table.",
    hint: "add [templating] (and [templating.partials] for named templates) to annal.toml",
  },
  ANNAL_TEMPLATE_PARTIAL_NOT_FOUND: {
    status: 500,
    meaning:
      '`templating.render("@name")` names a partial that `[templating.partials]` does not define.',
  },
  ANNAL_TEMPLATE_INVALID: {
    status: 500,
    meaning:
      "A template does not compile or render (Handlebars' message says where), or a partial's file cannot be read.",
    surfaces: ["startup"],
  },
} as const satisfies Record<string, ErrorCodeSpec>;
