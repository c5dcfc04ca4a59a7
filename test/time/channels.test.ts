import fc from "fast-check";
import t from "tap";
import { momentOption } from "../../src/cli/commands/access.ts";
import { AnnalError } from "../../src/errors/index.ts";
import { momentArgument } from "../../src/graphql/moments.ts";
import { parseMoment } from "../../src/rest/time.ts";
import type { Clock } from "../../src/time/index.ts";

// The three ways a person writes a moment to annal, each as its channel reads it: the REST
// channel's `at`/`since` parameter, GraphQL's `at`/`since` argument, the command line's `--at`.
// Given the same text on the same clock, they must read the same moment, or all refuse it,
// each with its own code.

type Outcome = { readonly ms: number } | { readonly code: string };

function outcome(read: () => Date | undefined): Outcome {
  try {
    const moment = read();
    return moment === undefined ? { code: "absent" } : { ms: moment.getTime() };
  } catch (error) {
    if (error instanceof AnnalError) return { code: error.code };
    throw error;
  }
}

const channels = {
  rest: (text: string, clock: Clock) => outcome(() => parseMoment("at", text, clock)),
  graphql: (text: string, clock: Clock) =>
    outcome(() => momentArgument(text, clock, { argument: "at", message: "Invalid at" })),
  cli: (text: string, clock: Clock) => outcome(() => momentOption(text, clock)),
};

/** What each channel refuses a text with. */
const REFUSALS = {
  rest: "ANNAL_PARAMETER_INVALID",
  graphql: "ANNAL_GRAPHQL_BAD_USER_INPUT",
  cli: "ANNAL_USAGE",
};

const digits = (n: number, min = 0, max = 10 ** n - 1) =>
  fc.integer({ min, max }).map((v) => String(v).padStart(n, "0"));
const caseOf = (text: fc.Arbitrary<string>) =>
  fc.tuple(text, fc.boolean()).map(([s, upper]) => (upper ? s.toUpperCase() : s));
const blanks = fc.constantFrom("", " ", "  ", "\t");

const compact = fc
  .array(
    fc.tuple(fc.integer({ min: 0, max: 400 }), fc.constantFrom("w", "d", "h", "m", "s", "ms")),
    { minLength: 1, maxLength: 3 },
  )
  .map((parts) => parts.map(([n, unit]) => `${n}${unit}`).join(""));
const isoDuration = fc
  .record({
    y: fc.option(fc.integer({ min: 0, max: 3 })),
    mo: fc.option(fc.integer({ min: 0, max: 14 })),
    w: fc.option(fc.integer({ min: 0, max: 5 })),
    d: fc.option(fc.integer({ min: 0, max: 40 })),
    h: fc.option(fc.integer({ min: 0, max: 30 })),
    mi: fc.option(fc.integer({ min: 0, max: 90 })),
    s: fc.option(fc.constantFrom("0", "5", "1.5", "59,25")),
  })
  .map(({ y, mo, w, d, h, mi, s }) => {
    const date = `${y === null ? "" : `${y}Y`}${mo === null ? "" : `${mo}M`}${w === null ? "" : `${w}W`}${d === null ? "" : `${d}D`}`;
    const time = `${h === null ? "" : `${h}H`}${mi === null ? "" : `${mi}M`}${s === null ? "" : `${s}S`}`;
    return `P${date}${time === "" ? "" : `T${time}`}`;
  });
const duration = fc.oneof(compact, caseOf(isoDuration));

const isoMoment = fc
  .record({
    year: digits(4, 1, 9999),
    month: digits(2, 0, 13),
    day: digits(2, 0, 32),
    time: fc.option(
      fc.record({
        sep: fc.constantFrom("T", "t", " "),
        hour: digits(2, 0, 24),
        minute: digits(2, 0, 60),
        second: fc.option(digits(2, 0, 60)),
        fraction: fc.option(fc.constantFrom(".5", ",25", ".123456789")),
        offset: fc.option(fc.constantFrom("Z", "z", "+02:00", "-0530", "+14", "-24:00")),
      }),
    ),
  })
  .map(({ year, month, day, time }) => {
    const date = `${year}-${month}-${day}`;
    if (time === null) return date;
    const seconds = time.second === null ? "" : `:${time.second}${time.fraction ?? ""}`;
    return `${date}${time.sep}${time.hour}:${time.minute}${seconds}${time.offset ?? ""}`;
  });

const relative = fc
  .tuple(caseOf(fc.constant("now")), blanks, fc.constantFrom("-", "+"), blanks, duration)
  .map((parts) => parts.join(""));
const phrase = caseOf(
  fc.oneof(
    fc.constantFrom(
      "now",
      "today",
      "yesterday",
      "this week",
      "last  week",
      "this month",
      "last month",
      "this year",
      "last year",
      "tomorrow",
    ),
    fc
      .tuple(
        fc.integer({ min: 0, max: 30 }),
        fc.constantFrom("second", "minute", "hour", "day", "week", "month", "year", "fortnight"),
        fc.constantFrom("s", ""),
        fc.boolean(),
      )
      .map(([n, unit, plural, ago]) =>
        ago ? `${n} ${unit}${plural} ago` : `last ${n} ${unit}${plural}`,
      ),
  ),
);

/** A text that is a moment, or close to one, or anything at all. */
const momentText = fc
  .tuple(
    fc.oneof(isoMoment, relative, duration, phrase, fc.string({ maxLength: 20 })),
    // Half the texts get one character slipped in somewhere.
    fc.option(fc.tuple(fc.nat(), fc.constantFrom(" ", "x", "-", ":", "Z", "1", "\u0000")), {
      freq: 2,
    }),
    blanks,
  )
  .map(([text, insertion, around]) => {
    if (insertion === null) return `${around}${text}${around}`;
    const [at, character] = insertion;
    const index = at % (text.length + 1);
    return `${text.slice(0, index)}${character}${text.slice(index)}`;
  });

const clock = fc.record({
  now: fc.date({
    min: new Date("1971-01-01T00:00:00Z"),
    max: new Date("2100-01-01T00:00:00Z"),
    noInvalidDate: true,
  }),
  timeZone: fc.constantFrom("UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata"),
});

t.test("REST, GraphQL and the CLI read a text as the same moment, or all refuse it", (t) => {
  let read = 0;
  let refused = 0;
  fc.assert(
    fc.property(momentText, clock, (text, clock) => {
      const rest = channels.rest(text, clock);
      const graphql = channels.graphql(text, clock);
      const cli = channels.cli(text, clock);
      if ("ms" in rest) {
        read++;
        return "ms" in graphql && "ms" in cli && graphql.ms === rest.ms && cli.ms === rest.ms;
      }
      refused++;
      return (
        rest.code === REFUSALS.rest &&
        "code" in graphql &&
        graphql.code === REFUSALS.graphql &&
        "code" in cli &&
        cli.code === REFUSALS.cli
      );
    }),
    { numRuns: 4000 },
  );
  // The generator is worth its name only when it makes both kinds in good number.
  t.ok(read > 1000, `${read} texts read as moments`);
  t.ok(refused > 400, `${refused} texts refused`);
  t.end();
});

t.test("the forms each channel took before read alike everywhere", (t) => {
  const now = new Date("2026-11-22T15:30:00Z");
  const clock = { now, timeZone: "Europe/Berlin" };
  const expected: Record<string, string> = {
    "2026-11-20T10:00:00Z": "2026-11-20T10:00:00.000Z",
    "2026-11-20T10:00:00.5+02:00": "2026-11-20T08:00:00.500Z",
    "2026-11-20T10:00": "2026-11-20T09:00:00.000Z",
    "2026-11-20": "2026-11-19T23:00:00.000Z",
    now: "2026-11-22T15:30:00.000Z",
    "now-1m": "2026-11-22T15:29:00.000Z",
    "now+2h": "2026-11-22T17:30:00.000Z",
    "now-P1W": "2026-11-15T15:30:00.000Z",
    yesterday: "2026-11-20T23:00:00.000Z",
    today: "2026-11-21T23:00:00.000Z",
    "2 hours ago": "2026-11-22T13:30:00.000Z",
    "3d": "2026-11-19T15:30:00.000Z",
  };
  for (const [text, iso] of Object.entries(expected)) {
    for (const [name, read] of Object.entries(channels)) {
      t.same(read(text, clock), { ms: Date.parse(iso) }, `${name}: ${text}`);
    }
  }
  // What `Date` alone took and no grammar means: refused everywhere now.
  for (const text of ["Sun Nov 22 2026", "11/22/2026", "2026", "1700000000000", "soon"]) {
    for (const [name, read] of Object.entries(channels)) {
      t.same(
        read(text, clock),
        { code: REFUSALS[name as keyof typeof REFUSALS] },
        `${name}: ${text}`,
      );
    }
  }
  t.end();
});
