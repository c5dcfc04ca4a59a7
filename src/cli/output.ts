import { isAnnalError } from "../errors.ts";

/** Where a command writes: results on standard output, failures on standard error. */
export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const processOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/**
 * `annal: <CODE>: <message>` and, where the error has one, `annal: hint: <hint>`. An error
 * that is not an `AnnalError` is a bug: `ANNAL_INTERNAL`, with its stack under `ANNAL_DEBUG`.
 */
export function failureLines(error: unknown, env: NodeJS.ProcessEnv = process.env): string[] {
  if (isAnnalError(error)) {
    const lines = [`annal: ${error.code}: ${error.message}`];
    if (error.hint) lines.push(`annal: hint: ${error.hint}`);
    return lines;
  }
  const message = error instanceof Error ? error.message : String(error);
  const lines = [
    `annal: ANNAL_INTERNAL: unexpected error: ${message}`,
    "annal: hint: this is a bug in annal; run again with ANNAL_DEBUG=1 for the stack trace, and report it",
  ];
  if (env.ANNAL_DEBUG && error instanceof Error && error.stack) lines.push(error.stack);
  return lines;
}
