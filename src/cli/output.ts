import { isAnnalError, classifyError } from "../errors/index.ts";

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
 * `annal: <CODE>: <message>` and, where the error has one, `annal: hint: <hint>`, as the one
 * classifier reads the error. An error that is not annal's is a bug: `ANNAL_INTERNAL` with
 * its own message (the one running the command is the operator), its stack under
 * `ANNAL_DEBUG`.
 */
export function failureLines(error: unknown, env: NodeJS.ProcessEnv = process.env): string[] {
  if (isAnnalError(error)) {
    const classified = classifyError(error, "cli");
    const lines = [`annal: ${classified.code}: ${classified.message}`];
    if (classified.hint) lines.push(`annal: hint: ${classified.hint}`);
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
