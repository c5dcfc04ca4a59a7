import { z } from "zod";
import { integer, text } from "../fields.ts";

/** An access function's name: the built-ins (`read`, `operator`, ...) or one a workflow declares. */
export const ACCESS_NAME = /^[a-z][a-z0-9_.-]{0,63}$/;

function activate() {
  return z
    .strictObject(
      {
        version: integer(1, 1_000_000_000).meta({
          description:
            "The version of the grants being activated. Raise it with every change of the grants: the same version with other grants stops start-up (`ANNAL_ACCESS_VERSION_CHANGED`).",
          example: 3,
        }),
        by: text().meta({
          description: "Who activates it, as the log records the activation.",
          example: "jane.doe@example.org",
        }),
      },
      { error: "expected a table: [authorization.activate]" },
    )
    .optional()
    .meta({
      description:
        "Activates the grants: each new version is recorded as an event (who, when, which version, the grants) when annal starts. Without this block no Access Configuration is active and all configurable access is denied (`ANNAL_ACCESS_NOT_ACTIVE`); removing it deactivates the one that was.",
    });
}

export function authorizationSection() {
  return z
    .strictObject(
      {
        grants: z
          .record(
            z
              .string()
              .regex(ACCESS_NAME, "expected an access function name such as operator")
              .meta({ title: "access function", example: "operator" }),
            z.array(text(), { error: "expected an array of principals" }),
          )
          .default({})
          .meta({
            description:
              "The Access Configuration: each access function (`read`, `export`, `write`, `operator`, `auditor`, or one that workflows and endpoints declare) with the principals it is granted to: group DNs (members, nested groups included), a person's DN, `account:<id>`, or `service:<name>`.",
            example: { operator: ["cn=annal-admins,ou=groups,dc=example,dc=org"] },
          }),
        activate: activate(),
      },
      { error: "expected a table: [authorization]" },
    )
    .prefault({})
    .meta({
      description:
        "The Access Configuration: which principals hold which access functions, in effect once activated.",
    });
}

/** The resolved `[authorization]` section. */
export type AuthorizationConfig = z.output<ReturnType<typeof authorizationSection>>;
