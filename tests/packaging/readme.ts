/**
 * The runnable examples of a package README: every ```js block (run as an ES module in the consumer
 * project) and every `npx` line of a ```sh block (run as a command there). `npm install` lines are
 * what the packaging test did already, so they are not run.
 */
/** One example: an ES module to run with node, or a shell command. */
export interface Example {
  kind: 'module' | 'command';
  code: string;
}

export function readmeExamples(markdown: string): Example[] {
  const out: Example[] = [];
  for (const m of markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)) {
    const [, lang, body] = m as unknown as [string, string, string];
    if (lang === 'js') out.push({ kind: 'module', code: body });
    if (lang === 'sh')
      for (const line of body.split('\n')) if (line.startsWith('npx ')) out.push({ kind: 'command', code: line });
  }
  return out;
}
