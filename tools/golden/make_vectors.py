#!/usr/bin/env python3
"""Golden vectors for the confighash hash (docs/design.md section 3).

An independent implementation of the encoding and digest, written from the
spec text (not from the TypeScript), so that test/unit/hash.test.ts compares
two readings of the contract rather than the code with itself.

The digest is keyed per namespace: nsKey = HMAC-SHA256(key, "confighash/v2
namespace\n" + namespace); hash = hex(HMAC-SHA256(nsKey, encoding)), where the
encoding starts with the line "confighash/v2\n". The encoding cases (one
namespace) go to hash-vectors.json, the namespace cases to hash-vectors-v2.json.

It also writes discovery vectors: pod specs and workload annotations (include,
exclude, live reload), the objects they read, and the `sources` annotation and
hash that section 3 gives for them, so that which sources count is pinned too.

Usage: python3 tools/golden/make_vectors.py [OUTPUT]
Default OUTPUT: test/fixtures/hash-vectors.json (relative to the repo root);
the namespace vectors go beside it, as hash-vectors-v2.json, and the discovery
vectors as discovery-vectors.json.
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

HEADER = b"confighash/v2\n"
NAMESPACE_KEY_PREFIX = b"confighash/v2 namespace\n"
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
    """The byte string for a list of {kind, name, selection, object} sources."""
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


def namespace_key(key, namespace):
    """The namespace's own HMAC key, derived from the hash key."""
    return hmac.new(key, NAMESPACE_KEY_PREFIX + utf8(namespace), hashlib.sha256).digest()


def source(kind, name, selection="all", obj=None):
    return {"kind": kind, "name": name, "selection": selection, "object": obj}


def v2_vector(name, namespace, sources, key=KEY_A):
    encoding = encode(sources)
    ns_key = namespace_key(key, namespace)
    return {
        "name": name,
        "keyHex": key.hex(),
        "namespace": namespace,
        "namespaceKeyHex": ns_key.hex(),
        "sources": sources,
        "encodingBase64": base64.b64encode(encoding).decode("ascii"),
        "hash": digest(ns_key, encoding),
    }


def vector(name, sources, key=KEY_A, namespace="default"):
    """An encoding case: the content varies, the namespace is one."""
    return v2_vector(name, namespace, sources, key)


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


APP = [source("ConfigMap", "app", "all", {"data": {"mode": "prod", "level": "info"}})]
DB_PASSWORD = [source("Secret", "db", ["password"], {"data": {"password": b64("hunter2")}})]

V2_VECTORS = [
    v2_vector("empty source list is just the v2 header", "default", []),
    v2_vector("configmap data, whole object", "default", APP),
    # The threat v2 answers: the same Secret name and content in two namespaces.
    v2_vector("same secret in namespace team-a", "team-a", DB_PASSWORD),
    v2_vector("same secret in namespace team-b", "team-b", DB_PASSWORD),
    # Not reachable (a namespaced object always has a namespace), but pins that the
    # derivation appends the name to the prefix and nothing else.
    v2_vector("empty namespace name: key of the prefix alone", "", DB_PASSWORD),
    v2_vector("namespace name of 63 characters", "n" * 63, DB_PASSWORD),
    v2_vector("different hash key, same namespace and content", "team-a", DB_PASSWORD, key=KEY_B),
    v2_vector(
        "mixed sources: absent, missing key, binaryData, sorted",
        "shop",
        [
            source("Secret", "zeta", "all", {"data": {"z": b64(b"\x00\xff")}}),
            source("ConfigMap", "beta", ["b", "gone"], {"data": {"b": "Grüße"}, "binaryData": {"x": b64("unselected")}}),
            source("Secret", "alpha", ["a"], None),
            source("ConfigMap", "alpha", "all", {"data": {"a": "1\n2"}}),
        ],
    ),
]


# --- discovery (section 3 "Sources", "Selected keys" and "Live reload") ----------

INCLUDE = "confighash.dev/include"
EXCLUDE = "confighash.dev/exclude"
LIVE_RELOAD = "confighash.dev/live-reload"
PREFIXES = {"configmap": "ConfigMap", "secret": "Secret"}


def listed(obj, field):
    value = obj.get(field) if isinstance(obj, dict) else None
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def parse_source_list(text):
    refs = []
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        prefix, _, name = entry.partition("/")
        kind = PREFIXES.get(prefix.lower())
        if kind and name and "/" not in name and not any(c.isspace() for c in name):
            refs.append((kind, name))
    return refs


def discover(pod_spec, annotations):
    """(kind, name) -> "all" or a sorted key list, for the sources that count."""
    found = {}

    def add(kind, name, keys):
        if not isinstance(name, str) or name == "":
            return
        entry = found.setdefault((kind, name), set())
        if keys == "all":
            found[(kind, name)] = "all"
        elif entry != "all":
            entry.update(k for k in keys if isinstance(k, str) and k)

    def by_items(kind, name, volume_source):
        items = volume_source.get("items")
        add(kind, name, [i.get("key") for i in items if isinstance(i, dict)] if isinstance(items, list) else "all")

    containers = listed(pod_spec, "initContainers") + listed(pod_spec, "containers")
    live_reload = annotations.get(LIVE_RELOAD) == "true"
    # A subPath mount never updates in a running pod: with live reload only those volumes count.
    fixed = {
        mount.get("name")
        for container in containers
        for mount in listed(container, "volumeMounts")
        if mount.get("subPath") or mount.get("subPathExpr")
    }
    for volume in listed(pod_spec, "volumes"):
        if live_reload and volume.get("name") not in fixed:
            continue
        if isinstance(volume.get("configMap"), dict):
            by_items("ConfigMap", volume["configMap"].get("name"), volume["configMap"])
        if isinstance(volume.get("secret"), dict):
            by_items("Secret", volume["secret"].get("secretName"), volume["secret"])
        for projection in listed(volume.get("projected") or {}, "sources"):
            if isinstance(projection.get("configMap"), dict):
                by_items("ConfigMap", projection["configMap"].get("name"), projection["configMap"])
            if isinstance(projection.get("secret"), dict):
                by_items("Secret", projection["secret"].get("name"), projection["secret"])
    for container in containers:
        for env_from in listed(container, "envFrom"):
            if isinstance(env_from.get("configMapRef"), dict):
                add("ConfigMap", env_from["configMapRef"].get("name"), "all")
            if isinstance(env_from.get("secretRef"), dict):
                add("Secret", env_from["secretRef"].get("name"), "all")
        for env in listed(container, "env"):
            value_from = env.get("valueFrom") if isinstance(env.get("valueFrom"), dict) else {}
            for field, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                ref = value_from.get(field)
                if isinstance(ref, dict):
                    add(kind, ref.get("name"), [ref.get("key")])
    for kind, name in parse_source_list(annotations.get(INCLUDE)):
        add(kind, name, "all")
    for kind, name in parse_source_list(annotations.get(EXCLUDE)):
        found.pop((kind, name), None)
    return {ref: keys if keys == "all" else sorted(keys, key=utf8) for ref, keys in found.items()}


def discovery_vector(name, pod_spec, objects, annotations=None, key=KEY_A, namespace="default"):
    """`objects`: "ConfigMap/NAME" -> the object as the API returns it; a source not in it is absent."""
    annotations = annotations or {}
    selected = discover(pod_spec, annotations)
    sources = [
        source(kind, obj_name, keys, objects.get(f"{kind}/{obj_name}"))
        for (kind, obj_name), keys in selected.items()
    ]
    ordered = sorted(sources, key=lambda s: (KIND_ORDER[s["kind"]], utf8(s["name"])))
    return {
        "name": name,
        "keyHex": key.hex(),
        "namespace": namespace,
        "podSpec": pod_spec,
        "annotations": annotations,
        "objects": objects,
        "sources": ",".join(f"{s['kind'].lower()}/{s['name']}" for s in ordered),
        "hash": digest(namespace_key(key, namespace), encode(sources)),
    }


def reloading_app(mounts):
    """An app with a configmap-reload sidecar: config volume `files`, env from Secret `env` and key `mode`."""
    return {
        "volumes": [
            {"name": "files", "configMap": {"name": "app-files"}},
            {"name": "conf", "configMap": {"name": "nginx", "items": [{"key": "nginx.conf", "path": "nginx.conf"}]}},
            {"name": "certs", "projected": {"sources": [{"secret": {"name": "tls"}}, {"configMap": {"name": "ca"}}]}},
        ],
        "initContainers": [
            {"name": "reload", "restartPolicy": "Always", "volumeMounts": [{"name": "files", "mountPath": "/watch"}]}
        ],
        "containers": [
            {
                "name": "app",
                "envFrom": [{"secretRef": {"name": "env"}}],
                "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "app-files", "key": "mode"}}}],
                "volumeMounts": mounts,
            }
        ],
    }


RELOAD_OBJECTS = {
    "ConfigMap/app-files": {"data": {"mode": "fast", "app.yaml": "v: 1"}},
    "ConfigMap/nginx": {"data": {"nginx.conf": "worker_processes 2;", "other": "x"}},
    "ConfigMap/ca": {"data": {"ca.crt": "CA"}},
    "Secret/tls": {"data": {"tls.crt": b64("CRT"), "tls.key": b64("KEY")}},
    "Secret/env": {"data": {"TOKEN": b64("t0k3n")}},
    "ConfigMap/extra": {"data": {"read-by-api": "1"}},
}
PLAIN_MOUNTS = [
    {"name": "files", "mountPath": "/etc/app"},
    {"name": "conf", "mountPath": "/etc/nginx"},
    {"name": "certs", "mountPath": "/etc/tls"},
]
SUBPATH_MOUNTS = [
    {"name": "files", "mountPath": "/etc/app"},
    {"name": "conf", "mountPath": "/etc/nginx/nginx.conf", "subPath": "nginx.conf"},
    {"name": "certs", "mountPath": "/etc/tls/$(POD)", "subPathExpr": "$(POD)"},
]
LIVE = {LIVE_RELOAD: "true"}

DISCOVERY_VECTORS = [
    discovery_vector("every mount counts without live reload", reloading_app(PLAIN_MOUNTS), RELOAD_OBJECTS),
    discovery_vector(
        "live reload: plain mounts drop out, env sources stay (app-files only through its env key)",
        reloading_app(PLAIN_MOUNTS),
        RELOAD_OBJECTS,
        LIVE,
    ),
    discovery_vector(
        "live reload: subPath and subPathExpr mounts still count",
        reloading_app(SUBPATH_MOUNTS),
        RELOAD_OBJECTS,
        LIVE,
    ),
    discovery_vector(
        "live reload: include still counts, exclude still removes",
        reloading_app(PLAIN_MOUNTS),
        RELOAD_OBJECTS,
        {**LIVE, INCLUDE: "configmap/extra", EXCLUDE: "secret/env"},
    ),
    discovery_vector(
        "live reload false is the default",
        reloading_app(PLAIN_MOUNTS),
        RELOAD_OBJECTS,
        {LIVE_RELOAD: "false"},
    ),
    discovery_vector(
        "live reload: a subPath mount in an init container counts; absent sources hashed as absent",
        {
            "volumes": [{"name": "seed", "secret": {"secretName": "seed"}}, {"name": "cfg", "configMap": {"name": "gone"}}],
            "initContainers": [{"name": "init", "volumeMounts": [{"name": "seed", "mountPath": "/s", "subPath": "k"}]}],
            "containers": [{"name": "app", "volumeMounts": [{"name": "cfg", "mountPath": "/c", "subPath": "x"}]}],
        },
        {"Secret/seed": {"data": {"k": b64("v")}}},
        LIVE,
    ),
    discovery_vector(
        "live reload: only plain mounts leaves no source",
        {
            "volumes": [{"name": "cfg", "configMap": {"name": "app-files"}}],
            "containers": [{"name": "app", "volumeMounts": [{"name": "cfg", "mountPath": "/c", "subPath": ""}]}],
        },
        RELOAD_OBJECTS,
        LIVE,
    ),
]


def self_check():
    # RFC 4231 test case 2: the digest step is plain HMAC-SHA256.
    assert digest(b"Jefe", b"what do ya want for nothing?") == (
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
    assert encode([]) == HEADER
    for vectors in (VECTORS, DISCOVERY_VECTORS):
        names = [v["name"] for v in vectors]
        assert len(names) == len(set(names)), "vector names must be unique"
    # Live reload changes which sources count, and so the hash.
    plain, live = DISCOVERY_VECTORS[0], DISCOVERY_VECTORS[1]
    assert plain["hash"] != live["hash"] and live["sources"] == "configmap/app-files,secret/env"
    # The spec's hand-checkable example: one ConfigMap with one key.
    assert encode([source("ConfigMap", "a", ["k"], {"data": {"k": "é"}})]) == (
        b"confighash/v2\nConfigMap\na\npresent\nk\n2\n\xc3\xa9\n"
    )
    assert len({v["name"] for v in V2_VECTORS}) == len(V2_VECTORS), "vector names must be unique"
    by_name = {v["name"]: v for v in V2_VECTORS}
    team_a, team_b = by_name["same secret in namespace team-a"], by_name["same secret in namespace team-b"]
    assert team_a["encodingBase64"] == team_b["encodingBase64"] and team_a["hash"] != team_b["hash"]
    assert by_name["empty namespace name: key of the prefix alone"]["namespaceKeyHex"] == (
        hmac.new(KEY_A, b"confighash/v2 namespace\n", hashlib.sha256).hexdigest()
    )
    # The hash key never keys a digest itself: only a namespace's key does.
    for vector in VECTORS + V2_VECTORS:
        encoding = base64.b64decode(vector["encodingBase64"])
        assert vector["hash"] != digest(bytes.fromhex(vector["keyHex"]), encoding)


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
    v2 = output.parent / "hash-vectors-v2.json"
    discovery = output.parent / "discovery-vectors.json"
    for path, vectors in ((output, VECTORS), (v2, V2_VECTORS), (discovery, DISCOVERY_VECTORS)):
        path.write_text(dump(vectors) + "\n", encoding="utf-8")
        assert json.loads(path.read_text(encoding="utf-8")) == vectors
        print(f"wrote {len(vectors)} vectors to {path}")


if __name__ == "__main__":
    main(sys.argv)
