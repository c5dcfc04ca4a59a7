import { z } from "zod";
import { namedOnce } from "./named-once.ts";
import { text } from "../fields.ts";

const NAME = /^[a-z][a-z0-9_-]*$/;
/** A duration or business time as the workflow engine reads it: `"2d"`, `"3bd"`, `"4bh"`. */
const AFTER = /^\d+(?:ms|s|m|h|d|w|bd|bh)(?:\d+(?:ms|s|m|h|d|w|bd|bh))*$/;

function scope() {
  return z
    .strictObject(
      {
        groups: text().optional().meta({
          description:
            "An LDAP filter (RFC 4515) the groups under review match; every member of each (its `member` and `uniqueMember` values) is an item.",
          example: "(objectClass=groupOfNames)",
        }),
        base: text().optional().meta({
          description: "Only groups at or under this DN. Default: the whole directory.",
          example: "ou=groups,dc=example,dc=org",
        }),
        accessFunction: text().optional().meta({
          description:
            "The holders of this access function under the active Access Configuration: every member of a group it is granted to is an item (the grant reviewed is the membership that carries it).",
          example: "operator",
        }),
      },
      { error: "expected a table: [reviews.scope]" },
    )
    .refine((s) => s.groups !== undefined || s.accessFunction !== undefined, {
      message: "give groups (a filter), accessFunction, or both",
    })
    .meta({
      description: "What is reviewed: memberships of groups, grants of an access function.",
    });
}

function reviewers() {
  return z
    .strictObject(
      {
        by: z
          .enum(["owner", "manager", "group"], {
            error: 'expected "owner", "manager" or "group"',
          })
          .default("owner")
          .meta({
            description:
              '`"owner"`: the group\'s owners (its `owner` values); `"manager"`: the member\'s manager (the attribute `managerAttribute` names); `"group"`: the members of the fixed group `group`.',
            example: "manager",
          }),
        managerAttribute: text().default("manager").meta({
          description: 'The member\'s attribute naming their manager by DN, for `by = "manager"`.',
          example: "manager",
        }),
        group: text().optional().meta({
          description: 'The group (a DN) whose members review, for `by = "group"`.',
          example: "cn=auditors,ou=groups,dc=example,dc=org",
        }),
        fallback: text().optional().meta({
          description:
            "Who reviews an item for which `by` finds nobody (a group without owner, a person without manager): a principal (a group DN, an account id). Without it, such an item is refused at the campaign's start and listed.",
          example: "cn=security,ou=groups,dc=example,dc=org",
        }),
      },
      { error: "expected a table: [reviews.reviewers]" },
    )
    .refine((r) => r.by !== "group" || r.group !== undefined, {
      message: 'by = "group" needs group, the DN of the reviewing group',
    })
    .prefault({})
    .meta({ description: "Who decides each item." });
}

function escalationLevel() {
  return z.strictObject(
    {
      after: text()
        .regex(AFTER, 'expected a duration or business time such as "2d" or "3bd"')
        .meta({
          description:
            "After how long (from the item's opening, then from the level before), in the engine's grammar of durations and business time.",
          example: "3bd",
        }),
      to: z
        .array(text())
        .min(1, "name at least one principal")
        .meta({
          description:
            "Who is asked from then on: principals (group DNs, account ids) and `fallback` for the reviewers' fallback.",
          example: ["cn=security,ou=groups,dc=example,dc=org"],
        }),
      mode: z
        .enum(["reassign", "add"], { error: 'expected "reassign" or "add"' })
        .default("add")
        .meta({
          description: '`"add"`: they decide beside the reviewers; `"reassign"`: instead of them.',
          example: "reassign",
        }),
    },
    { error: "expected an array of tables: [[reviews.escalation]]" },
  );
}

function review() {
  return z.strictObject(
    {
      name: text().regex(NAME, "expected a lowercase letter, then a-z, 0-9, _ or -").meta({
        description: "The campaign's name: `annal review start <name>` starts one.",
        example: "quarterly-groups",
      }),
      title: text().optional().meta({
        description: "A title for people (the inbox, the report). Default: the name.",
        example: "Quarterly review of group memberships",
      }),
      scope: scope(),
      reviewers: reviewers(),
      schedule: z
        .enum(["manual", "quarterly"], { error: 'expected "manual" or "quarterly"' })
        .default("manual")
        .meta({
          description:
            '`"manual"`: started by `annal review start <name>` (or the `startReview` mutation); `"quarterly"`: started by the workers on the first day of January, April, July and October (UTC), or at their first look after it, and by hand too.',
          example: "quarterly",
        }),
      deadline: text()
        .regex(AFTER, 'expected a duration or business time such as "10bd"')
        .default("10bd")
        .meta({
          description:
            "How long reviewers have, from the campaign's start: business days (`bd`) count in `calendar`. The moment is computed once, at the start, and recorded.",
          example: "15bd",
        }),
      calendar: text().optional().meta({
        description:
          "The `[[calendars]]` business time counts in (the deadline and the escalation). Default: the default calendar.",
        example: "de-be",
      }),
      escalation: z.array(escalationLevel()).default([]).meta({
        description:
          "Who else is asked, and when, while an item is undecided: levels as a dialog's escalation chain.",
      }),
      undecided: z
        .enum(["keep", "revoke"], { error: 'expected "keep" or "revoke"' })
        .default("keep")
        .meta({
          description:
            'What becomes of an item nobody decided by the deadline: `"keep"` keeps it and flags it in the report; `"revoke"` removes it from the directory.',
          example: "revoke",
        }),
      reasonRequiredForKeep: z.boolean().default(false).meta({
        description:
          "Whether a reviewer must give a reason to keep an item (one to revoke is always asked).",
        example: true,
      }),
    },
    { error: "expected an array of tables: [[reviews]]" },
  );
}

export function reviewsSection() {
  return z
    .array(review(), { error: "expected an array of tables: [[reviews]]" })
    .default([])
    .superRefine(namedOnce)
    .meta({
      description:
        "Access review campaigns (docs/access-reviews.md): who holds what, asked of who is responsible for it, with a deadline, escalation and evidence.",
    });
}
