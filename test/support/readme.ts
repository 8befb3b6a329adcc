// The README's quick start as the e2e suite runs it: the shell blocks between
// `<!-- quick-start -->` and `<!-- /quick-start -->`, each marked by the line above its fence,
// `<!-- e2e: run -->` or `<!-- e2e: not run: WHY -->`. A block with neither mark is an error,
// so a command added to the quick start is either run or said not to be.

export interface QuickStartBlock {
  /** The line of the block's opening fence in README.md (1-based). */
  readonly line: number;
  /** Why the suite does not run it; undefined for a block it runs. */
  readonly notRun?: string;
  readonly script: string;
}

const START = '<!-- quick-start -->';
const END = '<!-- /quick-start -->';
const RUN = '<!-- e2e: run -->';
const NOT_RUN = /^<!-- e2e: not run: (.+) -->$/;

/** The quick start's shell blocks, in order. */
export function quickStartBlocks(markdown: string): QuickStartBlock[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(START);
  const end = lines.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${START} … ${END} section`);
  const blocks: QuickStartBlock[] = [];
  for (let index = start + 1; index < end; index++) {
    const fence = /^```(\S*)\s*$/.exec(lines[index]!);
    if (!fence) continue;
    const close = lines.indexOf('```', index + 1);
    if (close < 0 || close > end) throw new Error(`README.md:${index + 1}: a fence never closed`);
    if (fence[1] === 'sh' || fence[1] === 'bash') {
      const mark = lines[index - 1] ?? '';
      const notRun = NOT_RUN.exec(mark)?.[1];
      if (mark !== RUN && notRun === undefined) {
        throw new Error(
          `README.md:${index + 1}: a quick-start block with neither ${RUN} nor <!-- e2e: not run: WHY --> above it`,
        );
      }
      blocks.push({
        line: index + 1,
        ...(notRun === undefined ? {} : { notRun }),
        script: lines.slice(index + 1, close).join('\n'),
      });
    }
    index = close;
  }
  return blocks;
}
