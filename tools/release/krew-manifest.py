#!/usr/bin/env python3
"""The krew manifest of a release: .krew.yaml (a krew-release-bot template) with the
tag and the archive's URL and sha256 filled in as the bot fills them.

usage: krew-manifest.py TEMPLATE TAG SHA256   (the manifest on stdout)
"""

import re
import sys

ADD_URI = re.compile(r'\{\{\s*addURIAndSha\s+"([^"]+)"\s+\.TagName\s*\}\}')
TAG = re.compile(r'\{\{\s*\.TagName\s*\}\}')


def main() -> None:
    template, tag, sha256 = sys.argv[1:]
    lines = []
    for line in open(template, encoding='utf-8').read().split('\n'):
        if line.startswith('#'):
            continue
        match = ADD_URI.search(line)
        if match:
            indent = line[: match.start()]
            lines.append(f'{indent}uri: {TAG.sub(tag, match.group(1))}')
            lines.append(f'{indent}sha256: {sha256}')
        else:
            lines.append(TAG.sub(tag, line))
    text = '\n'.join(lines)
    if '{{' in text:
        sys.exit(f'krew-manifest: {template} has a template action this does not know')
    sys.stdout.write(text)


if __name__ == '__main__':
    main()
