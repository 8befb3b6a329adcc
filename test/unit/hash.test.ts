// The hash (docs/design.md §3): golden vectors from an independent implementation
// (tools/golden/make_vectors.py), then the properties the contract promises.

import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  computeHash,
  contentOfConfigMap,
  contentOfSecret,
  deriveNamespaceKey,
  ENCODING_HEADER,
  encodeToBuffer,
  type HashInput,
  HashMemo,
  hashKeyId,
  NamespaceKeys,
  type SecretData,
} from '../../src/hash/index.js';
import {
  compareBytewise,
  formatSourceList,
  type KeySelection,
  type SourceKind,
} from '../../src/sources/index.js';
import { findSources } from '../../src/workload/index.js';
import { named } from '../support/named.js';

interface VectorSource {
  kind: SourceKind;
  name: string;
  selection: 'all' | string[];
  object: { data?: Record<string, string>; binaryData?: Record<string, string> } | null;
}

interface Vector {
  name: string;
  keyHex: string;
  namespace: string;
  namespaceKeyHex: string;
  sources: VectorSource[];
  encodingBase64: string;
  hash: string;
}

function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as T;
}

/** The encoding cases, in one namespace. */
const vectors = fixture<Vector[]>('hash-vectors.json');
/** The namespace cases: the same content in several namespaces, and their keys. */
const namespaceVectors = fixture<Vector[]>('hash-vectors-v2.json');

/** Table rows as [name, row]: `%s` shows the whole name, where `$name` quotes and truncates. */
function toInput(source: VectorSource): HashInput {
  const selection: KeySelection =
    source.selection === 'all' ? { all: true } : { all: false, keys: new Set(source.selection) };
  const content =
    source.object === null
      ? undefined
      : source.kind === 'ConfigMap'
        ? contentOfConfigMap(source.object)
        : contentOfSecret(source.object);
  return { kind: source.kind, name: source.name, selection, content };
}

function expectEncoding(encoding: Buffer, encodingBase64: string): void {
  // Compare as text first: a mismatch then shows where the encodings diverge.
  const expected = Buffer.from(encodingBase64, 'base64');
  expect(encoding.toString('latin1')).toBe(expected.toString('latin1'));
  expect(encoding.equals(expected)).toBe(true);
}

describe('golden vectors', () => {
  it('has enough uniquely named vectors to mean something', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(12);
    expect(new Set(vectors.map((vector) => vector.name)).size).toBe(vectors.length);
    expect(new Set(namespaceVectors.map((vector) => vector.name)).size).toBe(
      namespaceVectors.length,
    );
  });

  it('has two namespaces with the same content and different hashes', () => {
    const sameSecret = namespaceVectors.filter(({ name }) =>
      name.startsWith('same secret in namespace'),
    );
    expect(sameSecret.map(({ namespace }) => namespace)).toEqual(['team-a', 'team-b']);
    expect(sameSecret[0]!.encodingBase64).toBe(sameSecret[1]!.encodingBase64);
    expect(sameSecret[0]!.hash).not.toBe(sameSecret[1]!.hash);
  });

  const all = [...named(vectors), ...named(namespaceVectors)];

  it.each(all)('%s: namespace key', (_name, { keyHex, namespace, namespaceKeyHex }) => {
    expect(deriveNamespaceKey(Buffer.from(keyHex, 'hex'), namespace).toString('hex')).toBe(
      namespaceKeyHex,
    );
  });

  it.each(all)('%s: encoding', (_name, { sources, encodingBase64 }) => {
    expectEncoding(encodeToBuffer(sources.map(toInput)), encodingBase64);
  });

  it.each(all)('%s: hash', (_name, { keyHex, namespace, sources, hash }) => {
    const key = deriveNamespaceKey(Buffer.from(keyHex, 'hex'), namespace);
    expect(computeHash(key, sources.map(toInput))).toBe(hash);
  });
});

interface DiscoveryVector {
  name: string;
  keyHex: string;
  namespace: string;
  podSpec: unknown;
  annotations: Record<string, string>;
  objects: Record<string, VectorSource['object'] & object>;
  sources: string;
  hash: string;
}

const discoveryVectors = JSON.parse(
  readFileSync(new URL('../fixtures/discovery-vectors.json', import.meta.url), 'utf8'),
) as DiscoveryVector[];

// Which sources count (include, exclude, live reload) read from the same spec by both implementations.
describe('golden discovery vectors', () => {
  it('cover live reload', () => {
    const live = discoveryVectors.filter((v) => v.annotations['confighash.dev/live-reload']);
    expect(live.length).toBeGreaterThanOrEqual(4);
  });

  it.each(named(discoveryVectors))('%s', (_name, vector) => {
    const { sources, problems } = findSources(vector.podSpec, vector.annotations);
    expect(problems).toEqual([]);
    expect(formatSourceList(sources)).toBe(vector.sources);
    const inputs = sources.map((ref) => {
      const object = vector.objects[`${ref.kind}/${ref.name}`];
      const content =
        object === undefined
          ? undefined
          : ref.kind === 'ConfigMap'
            ? contentOfConfigMap(object)
            : contentOfSecret(object as SecretData);
      return { kind: ref.kind, name: ref.name, selection: ref.selection, content };
    });
    const key = deriveNamespaceKey(Buffer.from(vector.keyHex, 'hex'), vector.namespace);
    expect(computeHash(key, inputs)).toBe(vector.hash);
  });
});

const HASH_KEY = Buffer.alloc(32, 7);
/** The properties hold in one namespace. */
const KEY = deriveNamespaceKey(HASH_KEY, 'shop');
const ALL: KeySelection = { all: true };

function keys(...names: string[]): KeySelection {
  return { all: false, keys: new Set(names) };
}

function configMap(
  name: string,
  data: Record<string, string>,
  selection: KeySelection = ALL,
): HashInput {
  return { kind: 'ConfigMap', name, selection, content: contentOfConfigMap({ data }) };
}

function secret(name: string, plain: Record<string, string>, selection = ALL): HashInput {
  const data = Object.fromEntries(
    Object.entries(plain).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  );
  return { kind: 'Secret', name, selection, content: contentOfSecret({ data }) };
}

describe('computeHash', () => {
  const inputs = [
    configMap('app', { mode: 'prod', level: 'info' }),
    secret('creds', { password: 'hunter2' }),
    configMap('flags', { a: '1', b: '2' }, keys('a')),
    { kind: 'Secret', name: 'gone', selection: ALL, content: undefined } satisfies HashInput,
  ];

  it('is 64 lowercase hex characters', () => {
    expect(computeHash(KEY, inputs)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('returns the same hash independent of source order', () => {
    const reference = computeHash(KEY, inputs);
    for (const order of [
      [3, 2, 1, 0],
      [1, 3, 0, 2],
      [2, 0, 3, 1],
    ]) {
      const reordered = order.map((index) => inputs[index]!);
      expect(computeHash(KEY, reordered)).toBe(reference);
    }
  });

  it('returns the same hash independent of key order inside an object', () => {
    expect(computeHash(KEY, [configMap('app', { a: '1', b: '2', c: '3' })])).toBe(
      computeHash(KEY, [configMap('app', { c: '3', a: '1', b: '2' })]),
    );
  });

  it('returns the same hash when metadata, type or immutable change', () => {
    const before = {
      metadata: { name: 'creds', labels: { a: 'b' }, resourceVersion: '1', uid: 'u1' },
      type: 'Opaque',
      data: { password: Buffer.from('hunter2').toString('base64') },
    };
    const after = {
      metadata: { name: 'creds', labels: { c: 'd' }, resourceVersion: '9', uid: 'u2' },
      type: 'kubernetes.io/basic-auth',
      immutable: true,
      data: { password: Buffer.from('hunter2').toString('base64') },
    };
    const hashOf = (object: SecretData): string =>
      computeHash(KEY, [
        { kind: 'Secret', name: 'creds', selection: ALL, content: contentOfSecret(object) },
      ]);
    expect(hashOf(after)).toBe(hashOf(before));
    expect(contentOfSecret(after)).toEqual(contentOfSecret(before));
  });

  it.each(
    named([
      { name: 'configmap value', change: () => configMap('app', { mode: 'dev', level: 'info' }) },
      { name: 'secret value', change: () => secret('creds', { password: 'hunter3' }) },
      { name: 'selected key', change: () => configMap('flags', { a: '9', b: '2' }, keys('a')) },
      {
        name: 'absent becomes present',
        change: () => secret('gone', {}),
      },
      {
        name: 'key added to a whole source',
        change: () => configMap('app', { mode: 'prod', level: 'info', x: '' }),
      },
    ]),
  )('returns a different hash when the %s changes', (_name, { change }) => {
    const changed = change();
    const replaced = inputs.map((input) =>
      input.kind === changed.kind && input.name === changed.name ? changed : input,
    );
    expect(replaced).not.toEqual(inputs);
    expect(computeHash(KEY, replaced)).not.toBe(computeHash(KEY, inputs));
  });

  it('does not change when an unselected key changes', () => {
    const before = computeHash(KEY, [configMap('flags', { a: '1', b: '2' }, keys('a'))]);
    const after = computeHash(KEY, [
      configMap('flags', { a: '1', b: 'changed', c: 'new' }, keys('a')),
    ]);
    expect(after).toBe(before);
  });

  it('tells a missing selected key from an empty one', () => {
    const missing = computeHash(KEY, [configMap('app', {}, keys('k'))]);
    const empty = computeHash(KEY, [configMap('app', { k: '' }, keys('k'))]);
    expect(missing).not.toBe(empty);
  });

  it('tells an absent object from an empty one', () => {
    const absent = computeHash(KEY, [
      { kind: 'ConfigMap', name: 'app', selection: ALL, content: undefined },
    ]);
    const empty = computeHash(KEY, [configMap('app', {})]);
    expect(absent).not.toBe(empty);
  });

  it('tells a ConfigMap from a Secret with the same name and bytes', () => {
    expect(computeHash(KEY, [configMap('x', { k: 'v' })])).not.toBe(
      computeHash(KEY, [secret('x', { k: 'v' })]),
    );
  });

  it('cannot be fooled by moving bytes between key and value', () => {
    // Without length prefixes both would encode as "a\nb\nc\nd\n" (Reloader's `k=v;` flaw).
    const one = computeHash(KEY, [configMap('app', { a: 'b\nc\nd' })]);
    const two = computeHash(KEY, [configMap('app', { a: 'b', c: 'd' })]);
    expect(one).not.toBe(two);
  });

  it('returns a different hash for a different key', () => {
    const other = Buffer.from(HASH_KEY);
    other[31] = 8;
    expect(other.equals(HASH_KEY)).toBe(false);
    expect(computeHash(deriveNamespaceKey(other, 'shop'), inputs)).not.toBe(
      computeHash(KEY, inputs),
    );
  });

  it('returns a different hash in another namespace, the same in the same one', () => {
    expect(computeHash(deriveNamespaceKey(HASH_KEY, 'shop-2'), inputs)).not.toBe(
      computeHash(KEY, inputs),
    );
    expect(computeHash(deriveNamespaceKey(HASH_KEY, 'shop'), inputs)).toBe(
      computeHash(KEY, inputs),
    );
  });

  it('is keyed by the namespace key, never by the hash key itself', () => {
    const encoding = encodeToBuffer(inputs);
    const namespaceKey = createHmac('sha256', HASH_KEY)
      .update('confighash/v2 namespace\nshop')
      .digest();
    const expected = createHmac('sha256', namespaceKey).update(encoding).digest('hex');
    expect(computeHash(KEY, inputs)).toBe(expected);
    expect(createHmac('sha256', HASH_KEY).update(encoding).digest('hex')).not.toBe(expected);
  });

  it('streams exactly the bytes that encodeToBuffer returns into the HMAC', () => {
    const encoding = encodeToBuffer(inputs);
    expect(encoding.subarray(0, ENCODING_HEADER.length).toString()).toBe('confighash/v2\n');
    expect(computeHash(KEY, inputs)).toBe(createHmac('sha256', KEY).update(encoding).digest('hex'));
  });

  it.each([
    ['padded', 'YQ=='],
    ['unpadded', 'YQ'],
  ])('declares the decoded length of a %s base64 value', (_name, base64) => {
    const encoding = encodeToBuffer([
      {
        kind: 'Secret',
        name: 's',
        selection: ALL,
        content: contentOfSecret({ data: { k: base64 } }),
      },
    ]);
    expect(encoding.toString('latin1')).toBe(`${ENCODING_HEADER}Secret\ns\npresent\nk\n1\na\n`);
  });

  // Non-canonical base64 (never sent by the API) is re-encoded so the length prefix stays true.
  it.each(['YQ==\n', 'Y Q==', 'YQ'])(
    'declares the decoded length of non-canonical base64 %j',
    (text) => {
      const encoding = encodeToBuffer([
        {
          kind: 'Secret',
          name: 's',
          selection: ALL,
          content: contentOfSecret({ data: { k: text } }),
        },
      ]);
      expect(encoding.toString('latin1')).toBe(`${ENCODING_HEADER}Secret\ns\npresent\nk\n1\na\n`);
    },
  );

  it('does not reorder the caller’s array', () => {
    const given = [secret('b', {}), configMap('a', {})];
    computeHash(KEY, given);
    expect(given.map((input) => input.kind)).toEqual(['Secret', 'ConfigMap']);
  });
});

describe('formatSourceList', () => {
  it.each(
    named([
      { name: 'no sources', sources: [], expected: '' },
      {
        name: 'one configmap',
        sources: [{ kind: 'ConfigMap', name: 'app' }],
        expected: 'configmap/app',
      },
      {
        name: 'configmap before secret whatever the names',
        sources: [
          { kind: 'Secret', name: 'a' },
          { kind: 'ConfigMap', name: 'z' },
        ],
        expected: 'configmap/z,secret/a',
      },
      {
        name: 'same name in both kinds',
        sources: [
          { kind: 'Secret', name: 'shared' },
          { kind: 'ConfigMap', name: 'shared' },
        ],
        expected: 'configmap/shared,secret/shared',
      },
      {
        name: 'names in byte order',
        sources: [
          { kind: 'ConfigMap', name: 'ab' },
          { kind: 'ConfigMap', name: 'a.b' },
          { kind: 'ConfigMap', name: 'a' },
          { kind: 'ConfigMap', name: 'a-b' },
          { kind: 'Secret', name: 'b' },
          { kind: 'Secret', name: 'B' },
        ],
        expected: 'configmap/a,configmap/a-b,configmap/a.b,configmap/ab,secret/B,secret/b',
      },
    ] satisfies {
      name: string;
      sources: { kind: SourceKind; name: string }[];
      expected: string;
    }[]),
  )('%s', (_name, { sources, expected }) => {
    const given = [...sources];
    expect(formatSourceList(given)).toBe(expected);
    expect(given).toEqual(sources);
  });
});

describe('compareBytewise', () => {
  it.each(
    named([
      { name: 'equal strings', a: 'abc', b: 'abc', expected: 0 },
      { name: 'empty before anything', a: '', b: '-', expected: -1 },
      { name: 'prefix before longer', a: 'a', b: 'ab', expected: -1 },
      { name: "'-' before '.'", a: '-a', b: '.b', expected: -1 },
      { name: "'.' before '0'", a: '.b', b: '0', expected: -1 },
      { name: 'digits before upper case', a: '9', b: 'A', expected: -1 },
      { name: "upper case before '_'", a: 'Z', b: '_', expected: -1 },
      { name: "'_' before lower case", a: '_', b: 'a', expected: -1 },
      { name: 'latin-1 after ascii', a: 'z', b: 'é', expected: -1 },
      // UTF-16 code units put U+1F600 (0xD83D…) before U+FFFF; UTF-8 bytes do not.
      { name: 'U+FFFF before U+1F600', a: '\uFFFF', b: '\u{1F600}', expected: -1 },
      { name: 'private use U+E000 before U+1F600', a: '\uE000', b: '\u{1F600}', expected: -1 },
      { name: 'astral after astral', a: '\u{1F600}', b: '\u{1F601}', expected: -1 },
      { name: 'equal astral strings', a: 'x\u{1F600}', b: 'x\u{1F600}', expected: 0 },
    ]),
  )('%s', (_name, { a, b, expected }) => {
    expect(Math.sign(compareBytewise(a, b))).toBe(expected);
    expect(Math.sign(compareBytewise(b, a))).toBe(-expected || 0);
    expect(Math.sign(compareBytewise(a, b))).toBe(
      Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))),
    );
  });

  it('sorts keys the way the encoding needs', () => {
    const sorted = ['a', '_', '\u{1F600}', 'A', '0', '\uFFFF', '.b', '-a'].sort(compareBytewise);
    expect(sorted).toEqual(['-a', '.b', '0', 'A', '_', 'a', '\uFFFF', '\u{1F600}']);
  });
});

const ID = hashKeyId(HASH_KEY);

describe('HashMemo', () => {
  it('remembers what was set', () => {
    const memo = new HashMemo(4);
    memo.set(ID, 'ns', 'a', 'hash-a');
    expect(memo.get(ID, 'ns', 'a')).toBe('hash-a');
    expect(memo.get(ID, 'ns', 'b')).toBeUndefined();
  });

  it('evicts the least recently set entry beyond maxEntries', () => {
    const memo = new HashMemo(2);
    memo.set(ID, 'ns', 'a', '1');
    memo.set(ID, 'ns', 'b', '2');
    memo.set(ID, 'ns', 'c', '3');
    expect(memo.size).toBe(2);
    expect(memo.get(ID, 'ns', 'a')).toBeUndefined();
    expect(memo.get(ID, 'ns', 'b')).toBe('2');
    expect(memo.get(ID, 'ns', 'c')).toBe('3');
  });

  it('a get makes an entry recent again', () => {
    const memo = new HashMemo(2);
    memo.set(ID, 'ns', 'a', '1');
    memo.set(ID, 'ns', 'b', '2');
    memo.get(ID, 'ns', 'a');
    memo.set(ID, 'ns', 'c', '3');
    expect(memo.get(ID, 'ns', 'b')).toBeUndefined();
    expect(memo.get(ID, 'ns', 'a')).toBe('1');
    expect(memo.get(ID, 'ns', 'c')).toBe('3');
  });

  it('setting an existing entry replaces it and makes it recent', () => {
    const memo = new HashMemo(2);
    memo.set(ID, 'ns', 'a', '1');
    memo.set(ID, 'ns', 'b', '2');
    memo.set(ID, 'ns', 'a', '1b');
    expect(memo.size).toBe(2);
    memo.set(ID, 'ns', 'c', '3');
    expect(memo.get(ID, 'ns', 'a')).toBe('1b');
    expect(memo.get(ID, 'ns', 'b')).toBeUndefined();
  });

  it('a miss does not disturb recency', () => {
    const memo = new HashMemo(2);
    memo.set(ID, 'ns', 'a', '1');
    memo.set(ID, 'ns', 'b', '2');
    memo.get(ID, 'ns', 'missing');
    memo.set(ID, 'ns', 'c', '3');
    expect(memo.get(ID, 'ns', 'a')).toBeUndefined();
    expect(memo.size).toBe(2);
  });

  it('keeps each hash key and namespace apart', () => {
    const memo = new HashMemo(8);
    memo.set(ID, 'team-a', 'same objects', 'hash-a');
    expect(memo.get(ID, 'team-b', 'same objects')).toBeUndefined();
    expect(memo.get(hashKeyId(Buffer.alloc(32, 8)), 'team-a', 'same objects')).toBeUndefined();
    memo.set(ID, 'team-b', 'same objects', 'hash-b');
    expect(memo.get(ID, 'team-a', 'same objects')).toBe('hash-a');
    expect(memo.get(ID, 'team-b', 'same objects')).toBe('hash-b');
  });

  it('never grows beyond maxEntries', () => {
    const memo = new HashMemo(16);
    for (let index = 0; index < 100; index++) memo.set(ID, 'ns', `id-${index}`, String(index));
    expect(memo.size).toBe(16);
    expect(memo.get(ID, 'ns', 'id-83')).toBeUndefined();
    expect(memo.get(ID, 'ns', 'id-84')).toBe('84');
    expect(memo.get(ID, 'ns', 'id-99')).toBe('99');
  });
});

describe('NamespaceKeys', () => {
  it('derives each namespace key once and forgets the oldest beyond maxEntries', () => {
    const keys = new NamespaceKeys(HASH_KEY, 2);
    const first = keys.get('a');
    expect(first).toEqual(deriveNamespaceKey(HASH_KEY, 'a'));
    expect(keys.get('a')).toBe(first);
    keys.get('b');
    keys.get('c');
    expect(keys.size).toBe(2);
    expect(keys.get('a')).not.toBe(first);
    expect(keys.get('a')).toEqual(first);
  });
});

describe('hashKeyId', () => {
  it.each(
    named([
      { name: 'the same key, the same id', a: HASH_KEY, b: Buffer.from(HASH_KEY), same: true },
      { name: 'another key, another id', a: HASH_KEY, b: Buffer.alloc(32, 8), same: false },
    ]),
  )('%s', (_name, { a, b, same }) => {
    expect(hashKeyId(a) === hashKeyId(b)).toBe(same);
    expect(hashKeyId(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(new NamespaceKeys(a).id).toBe(hashKeyId(a));
  });
});
