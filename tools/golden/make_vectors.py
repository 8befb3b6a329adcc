#!/usr/bin/env python3
"""Golden vectors for the confighash v1 hash (DESIGN.md section 3).

An independent implementation of the encoding and digest, written from the
spec text (not from the TypeScript), so that test/unit/hash.test.ts compares
two readings of the contract rather than the code with itself.

Usage: python3 tools/golden/make_vectors.py [OUTPUT]
Default OUTPUT: test/fixtures/hash-vectors.json (relative to the repo root).
Standard library only. The output is deterministic: re-running it must leave
the fixture unchanged; a changed fixture means the hash changed, which makes
every workload in every cluster roll once.
"""

import base64
import hashlib
import hmac
import json
import sys
from pathlib import Path

HEADER = b"confighash/v1\n"
KIND_ORDER = {"ConfigMap": 0, "Secret": 1}
LINE_WIDTH = 100  # biome.json formatter.lineWidth

# Hash keys are the exact bytes of --hash-key-file (at least 32 bytes).
KEY_A = bytes(range(32))
KEY_B = b"confighash golden vector key, 40 bytes!!"
assert len(KEY_B) == 40


def b64(text_or_bytes):
    """Secret.data and ConfigMap.binaryData values as the API returns them."""
    raw = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else text_or_bytes
    return base64.b64encode(raw).decode("ascii")


def utf8(text):
    return text.encode("utf-8")


def object_content(kind, obj):
    """Key -> value bytes. Only data/binaryData count; nothing else in the object."""
    content = {}
    if kind == "ConfigMap":
        for key, value in (obj.get("data") or {}).items():
            content[key] = utf8(value)
        for key, value in (obj.get("binaryData") or {}).items():
            content[key] = base64.b64decode(value, validate=True)
    elif kind == "Secret":
        for key, value in (obj.get("data") or {}).items():
            content[key] = base64.b64decode(value, validate=True)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return content


def encode(sources):
    """The v1 byte string for a list of {kind, name, selection, object} sources."""
    for source in sources:
        for text in [source["name"], *(source["selection"] if source["selection"] != "all" else [])]:
            assert "\n" not in text, "names and keys cannot contain a newline"
    ordered = sorted(sources, key=lambda s: (KIND_ORDER[s["kind"]], utf8(s["name"])))
    out = bytearray(HEADER)
    for source in ordered:
        out += utf8(source["kind"]) + b"\n" + utf8(source["name"]) + b"\n"
        if source["object"] is None:
            out += b"absent\n"
            continue
        out += b"present\n"
        content = object_content(source["kind"], source["object"])
        keys = list(content) if source["selection"] == "all" else list(source["selection"])
        for key in sorted(keys, key=utf8):
            out += utf8(key) + b"\n"
            if key not in content:
                out += b"missing\n"
                continue
            value = content[key]
            out += str(len(value)).encode("ascii") + b"\n" + value + b"\n"
    return bytes(out)


def digest(key, encoding):
    return hmac.new(key, encoding, hashlib.sha256).hexdigest()


def source(kind, name, selection="all", obj=None):
    return {"kind": kind, "name": name, "selection": selection, "object": obj}


def vector(name, sources, key=KEY_A):
    encoding = encode(sources)
    return {
        "name": name,
        "keyHex": key.hex(),
        "sources": sources,
        "encodingBase64": base64.b64encode(encoding).decode("ascii"),
        "hash": digest(key, encoding),
    }


ALL_BYTES = bytes(range(256))
MIXED_KEYS = {"a": "6", "_": "5", "A": "4", "0": "3", ".b": "2", "-a": "1"}

VECTORS = [
    vector("empty source list is just the header", []),
    vector(
        "configmap data, whole object",
        [source("ConfigMap", "app", "all", {"data": {"mode": "prod", "level": "info"}})],
    ),
    vector(
        "configmap binaryData is base64-decoded",
        [source("ConfigMap", "blob", "all", {"binaryData": {"bytes.bin": b64(ALL_BYTES)}})],
    ),
    vector(
        "secret data is base64-decoded",
        [source("Secret", "creds", "all", {"data": {"password": b64("hunter2"), "user": b64("admin")}})],
    ),
    vector(
        "secret data with non-utf8 bytes",
        [source("Secret", "tls", "all", {"data": {"tls.key": b64(b"\x00\xff\xfe\x80\n\r")}})],
    ),
    vector(
        "empty values in configmap and secret",
        [
            source("ConfigMap", "empty", "all", {"data": {"blank": ""}}),
            source("Secret", "empty", "all", {"data": {"blank": ""}}),
        ],
    ),
    vector(
        "present object with no data at all",
        [source("ConfigMap", "bare", "all", {}), source("Secret", "bare", ["token"], {})],
    ),
    vector(
        "selected key missing from the object",
        [source("ConfigMap", "app", ["present", "gone"], {"data": {"present": "yes"}})],
    ),
    vector(
        "absent sources, selected keys and whole",
        [source("ConfigMap", "missing-cm", ["a", "b"], None), source("Secret", "missing-secret")],
    ),
    vector(
        "same name as configmap and secret, configmap sorts first",
        [
            source("Secret", "shared", "all", {"data": {"k": b64("from secret")}}),
            source("ConfigMap", "shared", "all", {"data": {"k": "from configmap"}}),
        ],
    ),
    vector(
        "keys in byte order",
        [source("ConfigMap", "order", "all", {"data": MIXED_KEYS})],
    ),
    vector(
        "selected keys in byte order",
        [source("Secret", "order", ["a", "0", "-a", "_", "A", ".b"], {"data": {k: b64(v) for k, v in MIXED_KEYS.items()}})],
    ),
    vector(
        "source names in byte order",
        [
            source("ConfigMap", "ab", "all", {"data": {"k": "4"}}),
            source("ConfigMap", "a.b", "all", {"data": {"k": "3"}}),
            source("ConfigMap", "a-b", "all", {"data": {"k": "2"}}),
            source("ConfigMap", "a", "all", {"data": {"k": "1"}}),
            source("ConfigMap", "a0", "all", {"data": {"k": "5"}}),
        ],
    ),
    vector(
        "multi-byte utf-8 value, length counts bytes",
        [source("ConfigMap", "i18n", "all", {"data": {"greeting": "Grüße, 世界 😀"}})],
    ),
    vector(
        "multi-byte utf-8 in a secret",
        [source("Secret", "i18n", "all", {"data": {"greeting": b64("Grüße, 世界 😀")}})],
    ),
    vector(
        "whole selection",
        [source("ConfigMap", "wide", "all", {"data": {"a": "1", "b": "2", "c": "3"}})],
    ),
    vector(
        "explicit subset of the same object",
        [source("ConfigMap", "wide", ["c", "a"], {"data": {"a": "1", "b": "2", "c": "3"}})],
    ),
    vector(
        "explicit selection of every key encodes like whole",
        [source("ConfigMap", "wide", ["c", "b", "a"], {"data": {"a": "1", "b": "2", "c": "3"}})],
    ),
    vector(
        "sources given in unsorted order",
        [
            source("Secret", "zeta", "all", {"data": {"z": b64("26")}}),
            source("ConfigMap", "beta", ["b"], {"data": {"b": "2", "x": "unselected"}}),
            source("Secret", "alpha", ["a"], None),
            source("ConfigMap", "alpha", "all", {"data": {"a": "1"}}),
        ],
    ),
    vector(
        "value containing newlines",
        [source("ConfigMap", "multiline", "all", {"data": {"app.yaml": "a: 1\nb:\n  - 2\n\n", "nl": "\n"}})],
    ),
    vector(
        "binaryData and data in one configmap",
        [
            source(
                "ConfigMap",
                "mixed",
                "all",
                {"data": {"text": "plain", "z-last": "z"}, "binaryData": {"bin": b64(b"\x01\x02\x03"), "a-first": b64("A")}},
            )
        ],
    ),
    vector(
        "long value has a multi-digit length",
        [source("ConfigMap", "long", "all", {"data": {"big": "0123456789" * 123}})],
    ),
    vector(
        "different hash key, same encoding as configmap data",
        [source("ConfigMap", "app", "all", {"data": {"mode": "prod", "level": "info"}})],
        key=KEY_B,
    ),
    vector(
        # Not reachable through the API (keys match [-._a-zA-Z0-9]+), but pins that
        # the order is UTF-8 byte order, which differs from UTF-16 code unit order
        # once astral characters appear.
        "astral and bmp keys in utf-8 byte order",
        [source("ConfigMap", "astral", "all", {"data": {"\U0001F600": "astral", "\uFFFF": "bmp-last", "\uE000": "bmp-private"}})],
    ),
]


def self_check():
    # RFC 4231 test case 2: the digest step is plain HMAC-SHA256.
    assert digest(b"Jefe", b"what do ya want for nothing?") == (
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
    assert encode([]) == HEADER
    names = [v["name"] for v in VECTORS]
    assert len(names) == len(set(names)), "vector names must be unique"
    # The spec's hand-checkable example: one ConfigMap with one key.
    assert encode([source("ConfigMap", "a", ["k"], {"data": {"k": "é"}})]) == (
        b"confighash/v1\nConfigMap\na\npresent\nk\n2\n\xc3\xa9\n"
    )


def dump(value, indent=0, column=0):
    """JSON laid out as biome formats it (scalar arrays on one line when they fit),
    so that `biome check` passes on the fixture and re-running leaves it unchanged.
    `column` is where the value starts on its line."""
    pad = "  " * indent
    inner = "  " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = []
        for key, item in value.items():
            prefix = f"{inner}{json.dumps(key, ensure_ascii=False)}: "
            items.append(prefix + dump(item, indent + 1, len(prefix)))
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(not isinstance(item, (dict, list)) for item in value):
            flat = "[" + ", ".join(json.dumps(item, ensure_ascii=False) for item in value) + "]"
            if column + len(flat) + len(",") <= LINE_WIDTH:
                return flat
        items = [inner + dump(item, indent + 1, len(inner)) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)



def main(argv):
    self_check()
    root = Path(__file__).resolve().parents[2]
    output = Path(argv[1]) if len(argv) > 1 else root / "test" / "fixtures" / "hash-vectors.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(dump(VECTORS) + "\n", encoding="utf-8")
    assert json.loads(output.read_text(encoding="utf-8")) == VECTORS
    print(f"wrote {len(VECTORS)} vectors to {output}")


if __name__ == "__main__":
    main(sys.argv)
