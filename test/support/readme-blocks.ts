/**
 * README.md's code blocks as test/readme-runs.test.ts runs them, with what the README says
 * about each in HTML comments a reader does not see (the line just before the block):
 *
 * - `<!-- readme-test: skip: <why> -->`: the test does not run the block and says why;
 * - `<!-- readme-test: <placeholder> = /<pattern>/ -->` (one or more, each in its own comment):
 *   the visible placeholder (`<the dialog id>`) is what the block before printed where the
 *   pattern's first group matched, the substitution the prose tells the reader to make;
 * - `<!-- readme-test: prints /<pattern>/ -->`: what the README says the block shows (a result
 *   the prose promises, which an empty answer would not be);
 * - `<!-- readme-test: when: <command> -->`: the block is run once the command succeeds (run
 *   in the session, quietly), the moment the prose tells the reader to wait for ("a moment
 *   later, the ticket is there").
 */

export interface ReadmeBlock {
  /** The README's line of the opening fence (1-based). */
  readonly line: number;
  readonly language: string;
  readonly text: string;
  /** Why the test does not run it, when the README says so. */
  readonly skip?: string;
  readonly substitutions: readonly { readonly placeholder: string; readonly pattern: RegExp }[];
  readonly prints: readonly RegExp[];
  /** A shell command that succeeds once the block may run (what the prose says to wait for). */
  readonly when?: string;
  /** The prose between the block before and this one. */
  readonly before: string;
  /** The prose between this block and the next. */
  readonly after: string;
}

const MARKER = /<!--\s*readme-test:\s*([\s\S]*?)\s*-->/g;

function pattern(source: string): RegExp {
  const match = /^\/(.+)\/([a-z]*)$/s.exec(source.trim());
  if (!match) throw new Error(`readme-test: ${source} is not a /pattern/`);
  return new RegExp(match[1]!, match[2]);
}

/** Every fenced block of `markdown` in order, with the markers just before it. */
export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split("\n");
  const found: Omit<ReadmeBlock, "after">[] = [];
  let prose: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) {
      prose.push(lines[i]!);
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!);
    // The markers are the comments right above the fence (blank lines between them allowed).
    const above: string[] = [];
    for (let j = prose.length - 1; j >= 0 && /^\s*(<!--.*-->)?\s*$/.test(prose[j]!); j--) {
      above.unshift(prose[j]!);
    }
    let skip: string | undefined;
    let when: string | undefined;
    const substitutions: { placeholder: string; pattern: RegExp }[] = [];
    const prints: RegExp[] = [];
    for (const [, said] of above.join("\n").matchAll(MARKER)) {
      const text = said!;
      if (text.startsWith("skip:")) skip = text.slice("skip:".length).trim();
      else if (text.startsWith("when:")) when = text.slice("when:".length).trim();
      else if (text.startsWith("prints ")) prints.push(pattern(text.slice("prints ".length)));
      else {
        const sub = /^(<[^>]+>)\s*=\s*(\/.+\/[a-z]*)$/s.exec(text);
        if (!sub)
          throw new Error(`README.md:${start + 1}: a readme-test marker I cannot read: ${text}`);
        substitutions.push({ placeholder: sub[1]!, pattern: pattern(sub[2]!) });
      }
    }
    found.push({
      line: start + 1,
      language: open[1] ?? "",
      text: `${body.join("\n")}\n`,
      ...(skip !== undefined ? { skip } : {}),
      ...(when !== undefined ? { when } : {}),
      substitutions,
      prints,
      before: prose.join("\n"),
    });
    prose = [];
  }
  return found.map((block, index) => ({
    ...block,
    after: index + 1 < found.length ? found[index + 1]!.before : prose.join("\n"),
  }));
}
