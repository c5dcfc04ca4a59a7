import t from "tap";
import { calendarsSection } from "../../src/config/index.ts";
import {
  prepareReviewItemDefinition,
  startCampaign,
  type ReviewDefinition,
} from "../../src/reviews/index.ts";
import { calendarsOf } from "../../src/time/index.ts";
import { advanceDatabaseClock, databaseClock } from "../../src/workflow/index.ts";
import { captureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

const GROUPS = "ou=groups,dc=example,dc=org";
const ANN = "uid=ann,ou=people,dc=example,dc=org";

/**
 * A campaign's deadline and its escalation count business days of the review's calendar: set
 * once at the start and recorded (on Friday at 10:00 in Berlin, three business days fall on
 * Wednesday at 10:00; the first escalation level a business day after the item opened, on
 * Monday).
 */
t.test("the deadline and the escalation are business days of the review's calendar", async (t) => {
  const c = await captureFixture(t, {
    seedLdif: `dn: ${ANN}\nobjectClass: inetOrgPerson\nuid: ann\ncn: ann\nsn: ann\n\ndn: cn=eng,${GROUPS}\nobjectClass: groupOfNames\ncn: eng\nowner: ${ANN}\nmember: ${ANN}\n`,
  });
  await c.sync();
  const calendars = calendarsOf(
    calendarsSection().parse([
      // The default calendar, which the review does not name, works Monday to Thursday.
      { name: "office", timeZone: "UTC", workingDays: [1, 2, 3, 4], default: true },
      { name: "de-be", timeZone: "Europe/Berlin" },
    ]),
  );
  const f = await workflowFixture(t, {
    dir: definitionsDir(t, {}),
    db: c.db,
    calendars,
    builtIn: [await prepareReviewItemDefinition()],
  });
  // Friday 11 December 2026, 10:00 in Berlin.
  const friday = Date.parse("2026-12-11T09:00:00Z");
  await advanceDatabaseClock(f.pool, friday - (await databaseClock(f.pool)).getTime());
  const definition: ReviewDefinition = {
    name: "eng",
    scope: { groups: "(cn=eng)" },
    reviewers: { by: "owner", managerAttribute: "manager" },
    schedule: "manual",
    deadline: "3bd",
    calendar: "de-be",
    escalation: [{ after: "1bd", to: ["cn=security,ou=groups,dc=example,dc=org"], mode: "add" }],
    undecided: "keep",
    reasonRequiredForKeep: false,
  };
  const started = await startCampaign(f, definition, { as: actor("admin") });
  const due = Date.parse(started.deadline);
  t.ok(
    due >= Date.parse("2026-12-16T09:00:00Z") && due < Date.parse("2026-12-16T09:01:00Z"),
    `the deadline on Wednesday at 10:00 in Berlin (${started.deadline})`,
  );
  const opened = await eventually(
    async () => {
      const found = await f.pool.query<{
        data: { until: string; escalation: { levels: { at: string }[] } };
      }>("SELECT data FROM events WHERE type = 'DialogOpened'");
      return found.rows[0]?.data;
    },
    { what: "the item's dialog open" },
  );
  t.equal(opened.until, started.deadline, "the item's deadline is the campaign's");
  const level = Date.parse(opened.escalation.levels[0]!.at);
  t.ok(
    level >= Date.parse("2026-12-14T09:00:00Z") && level < Date.parse("2026-12-14T09:01:00Z"),
    `the first level on Monday at 10:00 in Berlin (${opened.escalation.levels[0]!.at})`,
  );
});
