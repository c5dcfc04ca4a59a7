import type { z } from "zod";
import type { SectionContext } from "../fields.ts";
import { auditSection } from "./audit.ts";
import { authSection } from "./auth.ts";
import { authorizationSection } from "./authorization.ts";
import { calendarsSection } from "./calendars.ts";
import { databaseSection } from "./database.ts";
import { directorySection } from "./directory.ts";
import { eventsSection } from "./events.ts";
import { hooksSection } from "./hooks.ts";
import { graphqlSection } from "./graphql.ts";
import { i18nSection } from "./i18n.ts";
import { logSection } from "./log.ts";
import { messagingSection } from "./messaging.ts";
import { restSection } from "./rest.ts";
import { retentionSection } from "./retention.ts";
import { reviewsSection } from "./reviews.ts";
import { rulesSection } from "./rules.ts";
import { serverSection } from "./server.ts";
import { templatingSection } from "./templating.ts";
import { workflowsSection } from "./workflows.ts";

/**
 * The configuration's sections, one schema per file. A new section is one file exporting a
 * factory and one line here; its key is the table's name in `annal.toml`. A section that
 * is always present ends in `.prefault({})` so its defaults apply when the table is absent;
 * an optional one ends in `.optional()`. The section and every key in it, at any depth, say
 * what they mean in `.meta({ description, example })`: `docs/configuration.md` is generated
 * from them (`npm run docs`), and a test fails for a key without a description.
 */
export const sections = {
  server: serverSection,
  database: databaseSection,
  log: logSection,
  directory: directorySection,
  hooks: hooksSection,
  workflows: workflowsSection,
  calendars: calendarsSection,
  reviews: reviewsSection,
  rest: restSection,
  graphql: graphqlSection,
  i18n: i18nSection,
  auth: authSection,
  authorization: authorizationSection,
  rules: rulesSection,
  messaging: messagingSection,
  templating: templatingSection,
  events: eventsSection,

  audit: auditSection,
  retention: retentionSection,
} satisfies Record<string, (ctx: SectionContext) => z.ZodType>;
