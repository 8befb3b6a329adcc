// No document sends a reader out of the repository or into nothing: every Markdown link
// of the repository's files points at a file it holds (and, with `#heading`, at a
// heading there), and the specification is cited as docs/design.md, never as a file
// outside the repository.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

/** The repository's files as git knows them: tracked, or new and not ignored. */
const FILES = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], {
  cwd: REPO_ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file !== '' && existsSync(join(REPO_ROOT, file)));
const FILE_SET = new Set(FILES);
const DIRECTORIES = new Set(FILES.flatMap((file) => ancestors(file)));

function ancestors(file: string): string[] {
  const parts = file.split('/').slice(0, -1);
  return parts.map((_, index) => parts.slice(0, index + 1).join('/'));
}

const DOCUMENTS = FILES.filter((file) => file.endsWith('.md'));

/** The lines of a Markdown text, those of fenced code blocks blanked. */
function outsideFences(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
}

/** Text outside code, fenced or inline: where links live. */
function prose(markdown: string): string[] {
  return outsideFences(markdown).map((line) => line.replace(/(`+)[^`]*?\1/g, '``'));
}

/** The link targets of a Markdown text: inline `[text](target)`, images, and `[ref]: target`. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of prose(markdown)) {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      targets.push(match[1]!);
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (definition) targets.push(definition[1]!);
  }
  return targets;
}

/** GitHub's anchors of a Markdown text's headings (duplicates numbered -1, -2, …). */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideFences(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The project's own files on GitHub: what the chart's README links to, since it is read on its own. */
const OWN_PREFIX = 'https://github.com/confighash/confighash/blob/main/';
const OWN_URL = /^https:\/\/github\.com\/confighash\/confighash\/(?:blob|tree)\/main\/(.*)$/;
const CHART_DIR = 'charts/confighash';

/** What is wrong with one link of `from` (a repository path), or undefined when it is fine. */
function linkProblem(
  from: string,
  target: string,
  read: (file: string) => string,
  exists: { files: ReadonlySet<string>; directories: ReadonlySet<string> },
): string | undefined {
  if (target === '') return 'an empty link';
  const own = OWN_URL.exec(target);
  const inChart = from.startsWith(`${CHART_DIR}/`);
  if (!own && (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//'))) {
    return 'leaves the repository';
  }
  const [pathPart, anchor] = (own ? own[1]! : target).split('#', 2) as [string, string | undefined];
  const path = decodeURIComponent(pathPart);
  const base = own ? '' : dirname(from);
  const resolved = path === '' ? from : normalize(join(base, path)).replace(/\/$/, '');
  if (resolved.startsWith('..') || resolved.startsWith('/')) return 'leaves the repository';
  if (inChart && !own && !resolved.startsWith(`${CHART_DIR}/`)) {
    return `leaves the chart: read on its own (Artifact Hub, helm show readme), the chart needs ${OWN_PREFIX}${resolved}`;
  }
  const isFile = exists.files.has(resolved);
  if (!isFile && !exists.directories.has(resolved)) return `${resolved} is not in the repository`;
  if (anchor === undefined) return undefined;
  if (!isFile || !resolved.endsWith('.md'))
    return `#${anchor} in ${resolved}, which has no headings`;
  return headingAnchors(read(resolved)).has(anchor.toLowerCase())
    ? undefined
    : `${resolved} has no heading #${anchor}`;
}

const read = (file: string): string => readFileSync(join(REPO_ROOT, file), 'utf8');

/** Every tracked text file (not the repository's own binaries) with the lines holding `needle`. */
function filesContaining(needle: string): string[] {
  const found: string[] = [];
  for (const file of FILES) {
    const path = join(REPO_ROOT, file);
    if (statSync(path).size > 4_000_000) continue;
    const bytes = readFileSync(path);
    if (bytes.includes(0)) continue;
    bytes
      .toString('utf8')
      .split('\n')
      .forEach((line, index) => {
        if (line.includes(needle)) found.push(`${file}:${index + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe('documentation links', () => {
  it('every Markdown link points into the repository, at a file and heading it holds', () => {
    const exists = { files: FILE_SET, directories: DIRECTORIES };
    const problems = DOCUMENTS.flatMap((file) =>
      linkTargets(read(file)).flatMap((target) => {
        const problem = linkProblem(file, target, read, exists);
        return problem ? [`${file}: (${target}) ${problem}`] : [];
      }),
    );
    expect(DOCUMENTS).toContain('README.md');
    expect(problems).toEqual([]);
  });

  it('nothing refers to a directory beside the repository, nor to the specification by another name', () => {
    // Spelled in two pieces so that this file does not match itself.
    expect(filesContaining(['..', 'shared/'].join('/'))).toEqual([]);
    expect(filesContaining(['DESIGN', 'md'].join('.'))).toEqual([]);
  });
});

describe('the link checker', () => {
  const exists = {
    files: new Set(['README.md', 'docs/a.md', 'docs/b.md']),
    directories: new Set(['docs']),
  };
  const texts: Record<string, string> = {
    'docs/a.md': '# A page\n\n## Why did (or didn’t) it roll?\n\n```\n# not a heading\n```\n',
    'docs/b.md': '## Helm 3 → Helm 4: `ssa` once\n## Same\n## Same\n',
  };
  const problemOf = (from: string, target: string) =>
    linkProblem(from, target, (file) => texts[file] ?? '', exists);

  it.each([
    ['README.md', 'docs/a.md', undefined],
    ['README.md', 'docs/', undefined],
    ['docs/a.md', '../README.md', undefined],
    ['docs/a.md', '#why-did-or-didnt-it-roll', undefined],
    ['README.md', 'docs/b.md#helm-3--helm-4-ssa-once', undefined],
    ['README.md', 'docs/b.md#same-1', undefined],
    ['README.md', 'https://example.com/x', 'leaves the repository'],
    ['README.md', 'mailto:a@example.com', 'leaves the repository'],
    ['docs/a.md', '../../elsewhere/spec.md', 'leaves the repository'],
    ['README.md', 'docs/c.md', 'docs/c.md is not in the repository'],
    ['README.md', 'docs/a.md#not-a-heading', 'docs/a.md has no heading #not-a-heading'],
    ['README.md', 'docs/b.md#same-2', 'docs/b.md has no heading #same-2'],
    ['README.md', 'docs#x', '#x in docs, which has no headings'],
    ['README.md', `${OWN_PREFIX}docs/a.md#a-page`, undefined],
    ['README.md', `${OWN_PREFIX}docs/c.md`, 'docs/c.md is not in the repository'],
    ['README.md', 'https://github.com/other/repo/blob/main/docs/a.md', 'leaves the repository'],
    [
      'charts/confighash/README.md',
      '../../docs/a.md',
      `leaves the chart: read on its own (Artifact Hub, helm show readme), the chart needs ${OWN_PREFIX}docs/a.md`,
    ],
  ])('%s → %s: %s', (from, target, problem) => {
    expect(problemOf(from, target)).toBe(problem);
  });

  it('finds inline links, images and definitions, not those in code', () => {
    const text = [
      'See [a](docs/a.md "title") and ![img](x.png).',
      '[ref]: https://example.com',
      '`[not](code.md)` and',
      '```',
      '[nor](fenced.md)',
      '```',
    ].join('\n');
    expect(linkTargets(text)).toEqual(['docs/a.md', 'x.png', 'https://example.com']);
  });
});
