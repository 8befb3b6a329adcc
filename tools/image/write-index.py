#!/usr/bin/env python3
"""Writes an OCI layout whose one entry is an OCI index of images of another layout.

usage: write-index.py SOURCE OUT TAG IMAGE_TAG... -- KEY=VALUE...

SOURCE is umoci's layout, its images named by IMAGE_TAG (their ref.name). OUT (a new
directory) gets the blobs those images use and one index blob listing them with their
platforms (from each image's config), annotated with KEY=VALUE; OUT's index.json names
that index TAG. The same images and annotations give the same index bytes: manifests in
the order given, compact JSON with sorted keys.
"""

import hashlib
import json
import os
import sys

INDEX = 'application/vnd.oci.image.index.v1+json'


def main() -> None:
    args = sys.argv[1:]
    split = args.index('--') if '--' in args else len(args)
    source, out, tag, *image_tags = args[:split]
    annotations = dict(arg.split('=', 1) for arg in args[split + 1 :])
    source_index = json.loads(read(os.path.join(source, 'index.json')))
    by_tag = {m.get('annotations', {}).get('org.opencontainers.image.ref.name'): m for m in source_index['manifests']}
    missing = [t for t in image_tags if t not in by_tag]
    if missing:
        sys.exit(f'write-index: no image tagged {", ".join(missing)} in {source}')

    os.makedirs(os.path.join(out, 'blobs', 'sha256'))
    descriptors = []
    for image_tag in image_tags:
        manifest_descriptor = by_tag[image_tag]
        manifest = json.loads(read(blob_path(source, manifest_descriptor['digest'])))
        config = json.loads(read(blob_path(source, manifest['config']['digest'])))
        for digest in [manifest_descriptor['digest'], manifest['config']['digest']] + [
            layer['digest'] for layer in manifest['layers']
        ]:
            copy_blob(source, out, digest)
        descriptors.append(
            {
                'mediaType': manifest_descriptor['mediaType'],
                'digest': manifest_descriptor['digest'],
                'size': manifest_descriptor['size'],
                'platform': {'architecture': config['architecture'], 'os': config['os']},
            }
        )

    index = {'schemaVersion': 2, 'mediaType': INDEX, 'manifests': descriptors}
    if annotations:
        index['annotations'] = annotations
    index_bytes = json.dumps(index, separators=(',', ':'), sort_keys=True).encode()
    index_digest = 'sha256:' + sha256(index_bytes)
    write(blob_path(out, index_digest), index_bytes)
    layout_index = {
        'schemaVersion': 2,
        'manifests': [
            {
                'mediaType': INDEX,
                'digest': index_digest,
                'size': len(index_bytes),
                'annotations': {'org.opencontainers.image.ref.name': tag},
            }
        ],
    }
    write(os.path.join(out, 'index.json'), json.dumps(layout_index, separators=(',', ':')).encode())
    write(os.path.join(out, 'oci-layout'), read(os.path.join(source, 'oci-layout')))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copy_blob(source: str, out: str, digest: str) -> None:
    target = blob_path(out, digest)
    if os.path.exists(target):
        return
    # A hard link where the two lie on one file system: the layers are tens of MB.
    try:
        os.link(blob_path(source, digest), target)
    except OSError:
        write(target, read(blob_path(source, digest)))


def blob_path(layout: str, digest: str) -> str:
    algorithm, hex_digest = digest.split(':', 1)
    return os.path.join(layout, 'blobs', algorithm, hex_digest)


def read(path: str) -> bytes:
    with open(path, 'rb') as f:
        return f.read()


def write(path: str, data: bytes) -> None:
    with open(path, 'wb') as f:
        f.write(data)


if __name__ == '__main__':
    main()
