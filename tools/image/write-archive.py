#!/usr/bin/env python3
"""Writes an OCI image layout (umoci's) as one OCI archive that containerd imports.

usage: write-archive.py LAYOUT OUT EPOCH TAG=REF [TAG=REF ...]

Each TAG (umoci's tag, the layout index's org.opencontainers.image.ref.name) becomes
the full reference REF in io.containerd.image.name, which `ctr images import` names the
image by, and its ref.name becomes REF's own tag. Only the images named are kept.
The tar is byte for byte the same for the same layout: entries sorted, every mtime
EPOCH, owner 0:0, modes 0644/0755, a compact JSON index.
"""

import io
import json
import os
import sys
import tarfile


def main() -> None:
    layout, out, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    refs = dict(arg.split('=', 1) for arg in sys.argv[4:])
    index = json.loads(read(os.path.join(layout, 'index.json')))
    manifests = [m for m in index['manifests'] if tag_of(m) in refs]
    missing = set(refs) - {tag_of(m) for m in manifests}
    if missing:
        sys.exit(f'write-archive: no image tagged {", ".join(sorted(missing))} in {layout}')
    index['manifests'] = sorted(
        (relabel(layout, m, refs[tag_of(m)]) for m in manifests),
        key=lambda m: m['annotations']['io.containerd.image.name'],
    )

    blob_dir = os.path.join(layout, 'blobs', 'sha256')
    tmp = out + '.tmp'
    with tarfile.open(tmp, 'w', format=tarfile.PAX_FORMAT) as tar:
        add_file(tar, 'oci-layout', read(os.path.join(layout, 'oci-layout')), epoch)
        add_file(tar, 'index.json', json.dumps(index, separators=(',', ':')).encode(), epoch)
        add_dir(tar, 'blobs', epoch)
        add_dir(tar, 'blobs/sha256', epoch)
        for blob in sorted(os.listdir(blob_dir)):
            path = os.path.join(blob_dir, blob)
            with open(path, 'rb') as f:
                add_file(tar, 'blobs/sha256/' + blob, f, epoch, os.path.getsize(path))
    os.replace(tmp, out)


def tag_of(manifest: dict) -> str:
    return manifest.get('annotations', {}).get('org.opencontainers.image.ref.name', '')


def relabel(layout: str, manifest: dict, ref: str) -> dict:
    """The descriptor as containerd wants it: full name, tag, and the platform."""
    config_digest = json.loads(read(blob_path(layout, manifest['digest'])))['config']['digest']
    config = json.loads(read(blob_path(layout, config_digest)))
    return {
        **manifest,
        'annotations': {
            'io.containerd.image.name': ref,
            'org.opencontainers.image.ref.name': ref.rsplit(':', 1)[1],
        },
        'platform': {'architecture': config['architecture'], 'os': config['os']},
    }


def blob_path(layout: str, digest: str) -> str:
    algorithm, hex_digest = digest.split(':', 1)
    return os.path.join(layout, 'blobs', algorithm, hex_digest)


def read(path: str) -> bytes:
    with open(path, 'rb') as f:
        return f.read()


def add_dir(tar: tarfile.TarFile, name: str, epoch: int) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    info.mtime = epoch
    tar.addfile(info)


def add_file(tar: tarfile.TarFile, name: str, data, epoch: int, size: int = -1) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data) if size < 0 else size
    info.mode = 0o644
    info.mtime = epoch
    tar.addfile(info, io.BytesIO(data) if isinstance(data, bytes) else data)


if __name__ == '__main__':
    main()
