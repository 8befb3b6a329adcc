// Every citation of the specification — `§N`, or `§N "Name"` — in code, tests, tools and docs
// names a section that exists, and a part that section has: its heading, the bold lead of one of
// its paragraphs or bullets (`**Bounds.**`), or a table's header cell or a row's first cell. A
// citation may shorten a part's name to its first words ("Authenticating the apiserver" for
// "Authenticating the apiserver (optional)"). A section renumbered or a part renamed fails here.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

const DESIGN = 'docs/design.md';

interface Section {
  readonly title: string;
  /** Lower-cased: the heading, every bold lead and every table cell in the section. */
  readonly names: ReadonlySet<string>;
}

/** `## N. Title` headings, each with the bold leads written under it. */
function designSections(text: string): ReadonlyMap<number, Section> {
  const sections = new Map<number, { title: string; names: Set<string> }>();
  let current: { title: string; names: Set<string> } | undefined;
  for (const line of text.split('\n')) {
    const heading = /^## (\d+)\. (.+)$/.exec(line);
    if (heading) {
      current = { title: heading[2]!, names: new Set([heading[2]!.toLowerCase()]) };
      sections.set(Number(heading[1]), current);
      continue;
    }
    for (const bold of line.matchAll(/\*\*([^*]+?)[.:]?\*\*/g)) {
      current?.names.add(bold[1]!.toLowerCase());
    }
    const cells = /^\|(.+)\|$/
      .exec(line)?.[1]
      ?.split('|')
      .map((cell) => cell.trim());
    if (cells && !cells.every((cell) => /^:?-+:?$/.test(cell))) {
      // Every cell of a header (the row above `|---|`) is read too: cheap, and rows are long.
      for (const cell of cells) current?.names.add(cell.replaceAll('`', '').toLowerCase());
    }
  }
  return sections;
}

/** The part's full name, or its first words. */
function hasPart(section: Section, name: string): boolean {
  const wanted = name.toLowerCase();
  return [...section.names].some(
    (part) => part === wanted || part.startsWith(`${wanted} `) || part.startsWith(`${wanted},`),
  );
}

interface Citation {
  readonly file: string;
  readonly line: number;
  readonly section: number;
  readonly name?: string;
}

/** `§N`, `§N "Name"`, `§N, "Name"` and `§N ("Name")`; a range or list cites each number. */
function findCitations(file: string, text: string): Citation[] {
  const found: Citation[] = [];
  text.split('\n').forEach((content, index) => {
    for (const match of content.matchAll(/§(\d+)(?:,? \(?"([^"]+)"\)?)?/g)) {
      found.push({
        file,
        line: index + 1,
        section: Number(match[1]),
        ...(match[2] ? { name: match[2] } : {}),
      });
    }
  });
  return found;
}

function trackedFiles(): string[] {
  return execFileSync(
    'git',
    [
      'ls-files',
      '-z',
      '--',
      'src',
      'test',
      'tools',
      'bench',
      'docs',
      'charts',
      'manifests',
      '*.md',
    ],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    },
  )
    .split('\0')
    .filter((file) => /\.(ts|md|ya?ml|sh|py|tpl|txt)$/.test(file));
}

describe('citations of docs/design.md', () => {
  const sections = designSections(readFileSync(join(REPO_ROOT, DESIGN), 'utf8'));
  // Other documents' own sections (§ of a KEP, a Go file) are not ours: only lines that name
  // the design doc, and every line of the design doc and of the code.
  const citations = trackedFiles().flatMap((file) =>
    findCitations(file, readFileSync(join(REPO_ROOT, file), 'utf8')),
  );

  it('finds the citations it checks', () => {
    expect(sections.size).toBeGreaterThanOrEqual(12);
    expect(citations.length).toBeGreaterThan(100);
  });

  it('cites only sections that exist, by names they have', () => {
    const wrong = citations.flatMap((citation) => {
      const section = sections.get(citation.section);
      const at = `${citation.file}:${citation.line}`;
      if (!section) return [`${at}: §${citation.section} does not exist`];
      if (citation.name && !hasPart(section, citation.name)) {
        return [`${at}: §${citation.section} (${section.title}) has no part "${citation.name}"`];
      }
      return [];
    });
    expect(wrong).toEqual([]);
  });
});

describe('the citation readers', () => {
  it.each([
    ['a bare number', 'docs/design.md §4', [{ section: 4 }]],
    ['a name in quotes', 'design.md §7 "Kinds"', [{ section: 7, name: 'Kinds' }]],
    ['a name after a comma', '(§7, "Kinds")', [{ section: 7, name: 'Kinds' }]],
    ['a name in parentheses', '§10 ("Trust boundary")', [{ section: 10, name: 'Trust boundary' }]],
    ['a list', '§3 and §10', [{ section: 3 }, { section: 10 }]],
  ])('%s', (_name, text, expected) => {
    expect(
      findCitations('f', text).map(({ section, name }) => ({ section, ...(name ? { name } : {}) })),
    ).toEqual(expected);
  });

  it('reads headings and bold leads as the names of their section', () => {
    const sections = designSections(
      '## 4. Admission\n\n- **Bounds.** At most…\n## 5. Next\n**Other**',
    );
    expect([...sections.get(4)!.names]).toEqual(['admission', 'bounds']);
    const table = designSections(
      '## 10. Trust\n| threat | proven by |\n|---|---|\n| slow bodies, or many | e2e |',
    );
    expect([...table.get(10)!.names]).toEqual([
      'trust',
      'threat',
      'proven by',
      'slow bodies, or many',
      'e2e',
    ]);
    expect([...sections.get(5)!.names]).toEqual(['next', 'other']);
  });
});
