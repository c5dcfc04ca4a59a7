import { AnnalError, type ErrorCode } from "../errors/index.ts";

/**
 * An error of the REST channel. Its `details` are the problem body's members besides `code`,
 * `detail` and `hint` (RFC 9457 extension members): the parameter at fault, what was
 * expected, the unknown names. They carry nothing the client did not send or could not know.
 */
export class RestError extends AnnalError {
  constructor(
    code: ErrorCode,
    message: string,
    options: {
      status?: number;
      hint?: string;
      details?: Record<string, unknown>;
      cause?: unknown;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(code, message, options);
  }
}

/** A query parameter whose value cannot be read: `ANNAL_PARAMETER_INVALID`. */
export function invalidParameter(
  parameter: string,
  message: string,
  options: { hint?: string; expected?: string; details?: Record<string, unknown> } = {},
): RestError {
  return new RestError("ANNAL_PARAMETER_INVALID", `${parameter}: ${message}`, {
    hint: options.hint,
    details: {
      parameter,
      ...(options.expected === undefined ? {} : { expected: options.expected }),
      ...options.details,
    },
  });
}

/**
 * Attribute names the channel does not know, refused because the client asked for
 * `Prefer: handling=strict`. `unknown` lists them all; `parameters` says where each was.
 */
export class UnknownAttributesError extends RestError {
  readonly unknown: readonly string[];

  constructor(byParameter: Readonly<Record<string, readonly string[]>>) {
    const unknown = [...new Set(Object.values(byParameter).flat())];
    const where = Object.entries(byParameter)
      .filter(([, names]) => names.length > 0)
      .map(
        ([parameter, names]) => `${names.map((n) => JSON.stringify(n)).join(", ")} in ${parameter}`,
      )
      .join("; ");
    super(
      "ANNAL_ATTRIBUTES_UNKNOWN",
      `unknown attribute${unknown.length === 1 ? "" : "s"}: ${where}`,
      {
        hint: "check the spelling against the attributes in /api.json, or send Prefer: handling=lenient to ignore unknown names",
        details: { unknown, parameters: byParameter },
      },
    );
    this.unknown = unknown;
  }
}
