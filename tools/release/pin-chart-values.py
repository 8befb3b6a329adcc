#!/usr/bin/env python3
"""Pins the image of a copy of the chart: its values.yaml's image.repository, image.tag
and image.digest become the released ones, edited in place line by line so that every
comment stays as written.

usage: pin-chart-values.py VALUES_YAML REPOSITORY TAG DIGEST
"""

import re
import sys


def main() -> None:
    path, repository, tag, digest = sys.argv[1:]
    lines = open(path, encoding='utf-8').read().split('\n')
    wanted = {'repository': repository, 'tag': tag, 'digest': digest}
    start = lines.index('image:')
    for i in range(start + 1, len(lines)):
        if lines[i] and not lines[i].startswith(' '):
            break
        match = re.match(r'^  (repository|tag|digest): .*$', lines[i])
        if match:
            lines[i] = f'  {match.group(1)}: "{wanted.pop(match.group(1))}"'
    if wanted:
        sys.exit(f'pin-chart-values: {path} has no image.{", image.".join(wanted)}')
    open(path, 'w', encoding='utf-8').write('\n'.join(lines))


if __name__ == '__main__':
    main()
