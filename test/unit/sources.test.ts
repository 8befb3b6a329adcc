// Reference discovery (docs/design.md §3 "Sources" and "Selected keys"): every way a
// pod spec names a ConfigMap or Secret, plus the include/exclude annotations.

import { describe, expect, it } from 'vitest';
import { compareSources, parseSourceList, type SourceKind } from '../../src/sources/index.js';
import { EXCLUDE, findSources, INCLUDE, LIVE_RELOAD } from '../../src/workload/index.js';
import { named } from '../support/named.js';

/** A found source as a plain value: selection sorted so rows can be compared. */
interface Found {
  kind: SourceKind;
  name: string;
  keys: 'all' | string[];
  optional: boolean;
}

function summarize(podSpec: unknown, annotations: Record<string, string> = {}): Found[] {
  return findSources(podSpec, annotations)
    .sources.map((source) => ({
      kind: source.kind,
      name: source.name,
      keys: source.selection.all ? ('all' as const) : [...source.selection.keys].sort(),
      optional: source.optional,
    }))
    .sort(compareSources);
}

const cm = (name: string, keys: Found['keys'] = 'all', optional = false): Found => ({
  kind: 'ConfigMap',
  name,
  keys,
  optional,
});
const secret = (name: string, keys: Found['keys'] = 'all', optional = false): Found => ({
  kind: 'Secret',
  name,
  keys,
  optional,
});

/** Table rows as [name, row]: `%s` shows the whole name, where `$name` quotes and truncates. */
interface Row {
  name: string;
  spec: unknown;
  annotations?: Record<string, string>;
  expected: Found[];
}

const volumeRows: Row[] = [
  {
    name: 'configMap volume without items selects all',
    spec: { volumes: [{ name: 'v', configMap: { name: 'app' } }] },
    expected: [cm('app')],
  },
  {
    name: 'configMap volume with items selects those keys',
    spec: {
      volumes: [
        {
          name: 'v',
          configMap: {
            name: 'app',
            items: [
              { key: 'b', path: 'b.txt' },
              { key: 'a', path: 'a.txt' },
            ],
          },
        },
      ],
    },
    expected: [cm('app', ['a', 'b'])],
  },
  {
    name: 'optional configMap volume',
    spec: { volumes: [{ name: 'v', configMap: { name: 'app', optional: true } }] },
    expected: [cm('app', 'all', true)],
  },
  {
    name: 'optional: false is required',
    spec: { volumes: [{ name: 'v', configMap: { name: 'app', optional: false } }] },
    expected: [cm('app')],
  },
  {
    name: 'optional must be the boolean true',
    spec: { volumes: [{ name: 'v', configMap: { name: 'app', optional: 'true' } }] },
    expected: [cm('app')],
  },
  {
    name: 'secret volume by secretName',
    spec: { volumes: [{ name: 'v', secret: { secretName: 'creds' } }] },
    expected: [secret('creds')],
  },
  {
    name: 'secret volume with items and optional',
    spec: {
      volumes: [
        {
          name: 'v',
          secret: { secretName: 'tls', items: [{ key: 'tls.crt', path: 'c' }], optional: true },
        },
      ],
    },
    expected: [secret('tls', ['tls.crt'], true)],
  },
  {
    name: 'secret volume names by secretName, never name',
    spec: { volumes: [{ name: 'v', secret: { name: 'wrong-field' } }] },
    expected: [],
  },
  {
    name: 'projected configMap and secret (by name)',
    spec: {
      volumes: [
        {
          name: 'v',
          projected: {
            sources: [
              { configMap: { name: 'app', items: [{ key: 'k', path: 'k' }] } },
              { secret: { name: 'creds', optional: true } },
            ],
          },
        },
      ],
    },
    expected: [cm('app', ['k']), secret('creds', 'all', true)],
  },
  {
    name: 'projected service account token, downwardAPI and clusterTrustBundle are not sources',
    spec: {
      volumes: [
        {
          name: 'v',
          projected: {
            sources: [
              { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
              {
                downwardAPI: {
                  items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }],
                },
              },
              { clusterTrustBundle: { name: 'bundle', path: 'ca.pem' } },
            ],
          },
        },
      ],
    },
    expected: [],
  },
  {
    name: 'CSI volume with nodePublishSecretRef is not a source',
    spec: {
      volumes: [
        {
          name: 'v',
          csi: { driver: 'secrets-store.csi.k8s.io', nodePublishSecretRef: { name: 'csi-creds' } },
        },
      ],
    },
    expected: [],
  },
  {
    name: 'other volume kinds are not sources',
    spec: {
      volumes: [
        { name: 'a', emptyDir: {} },
        { name: 'b', hostPath: { path: '/etc/config' } },
        { name: 'c', persistentVolumeClaim: { claimName: 'config' } },
      ],
    },
    expected: [],
  },
];

const containerRows: Row[] = [
  {
    name: 'envFrom configMapRef and secretRef select all',
    spec: {
      containers: [
        {
          name: 'app',
          envFrom: [
            { configMapRef: { name: 'app' } },
            { secretRef: { name: 'creds', optional: true } },
          ],
        },
      ],
    },
    expected: [cm('app'), secret('creds', 'all', true)],
  },
  {
    name: 'envFrom with prefix still selects all',
    spec: {
      containers: [{ name: 'app', envFrom: [{ prefix: 'X_', configMapRef: { name: 'app' } }] }],
    },
    expected: [cm('app')],
  },
  {
    name: 'env configMapKeyRef and secretKeyRef select one key each',
    spec: {
      containers: [
        {
          name: 'app',
          env: [
            { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'app', key: 'mode' } } },
            {
              name: 'PW',
              valueFrom: { secretKeyRef: { name: 'creds', key: 'pw', optional: true } },
            },
          ],
        },
      ],
    },
    expected: [cm('app', ['mode']), secret('creds', ['pw'], true)],
  },
  {
    name: 'initContainers are scanned too',
    spec: {
      initContainers: [
        {
          name: 'init',
          envFrom: [{ secretRef: { name: 'init-creds' } }],
          env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'init-cfg', key: 'x' } } }],
        },
      ],
    },
    expected: [cm('init-cfg', ['x']), secret('init-creds')],
  },
  {
    name: 'native sidecar (initContainer with restartPolicy Always)',
    spec: {
      initContainers: [
        { name: 'proxy', restartPolicy: 'Always', envFrom: [{ configMapRef: { name: 'proxy' } }] },
      ],
    },
    expected: [cm('proxy')],
  },
  {
    name: 'every container, not just the first',
    spec: {
      containers: [
        { name: 'one', envFrom: [{ configMapRef: { name: 'first' } }] },
        { name: 'two', envFrom: [{ configMapRef: { name: 'second' } }] },
      ],
    },
    expected: [cm('first'), cm('second')],
  },
  {
    name: 'plain values and field/resource refs are not sources',
    spec: {
      containers: [
        {
          name: 'app',
          env: [
            { name: 'A', value: 'configmap/app' },
            { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'C', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
          ],
        },
      ],
    },
    expected: [],
  },
  {
    name: 'imagePullSecrets and serviceAccountName are not sources',
    spec: {
      imagePullSecrets: [{ name: 'registry' }],
      serviceAccountName: 'builder',
      automountServiceAccountToken: true,
      containers: [{ name: 'app', image: 'example/app:1' }],
    },
    expected: [],
  },
];

const emptyNameRows: Row[] = [
  {
    name: 'empty and missing names are ignored everywhere',
    spec: {
      volumes: [
        { name: 'a', configMap: { name: '' } },
        { name: 'b', configMap: {} },
        { name: 'c', secret: { secretName: '' } },
        { name: 'd', projected: { sources: [{ configMap: { name: '' } }, { secret: {} }] } },
      ],
      containers: [
        {
          name: 'app',
          envFrom: [{ configMapRef: { name: '' } }, { secretRef: {} }],
          env: [
            { name: 'A', valueFrom: { configMapKeyRef: { name: '', key: 'k' } } },
            { name: 'B', valueFrom: { secretKeyRef: { key: 'k' } } },
          ],
        },
      ],
    },
    expected: [],
  },
  {
    name: 'an empty item key selects nothing but keeps the source',
    spec: {
      volumes: [{ name: 'v', configMap: { name: 'app', items: [{ key: '', path: 'x' }] } }],
    },
    expected: [cm('app', [])],
  },
];

const mergeRows: Row[] = [
  {
    name: 'one whole reference makes the selection all',
    spec: {
      volumes: [{ name: 'v', configMap: { name: 'app', items: [{ key: 'a', path: 'a' }] } }],
      containers: [
        {
          name: 'app',
          env: [{ name: 'B', valueFrom: { configMapKeyRef: { name: 'app', key: 'b' } } }],
          envFrom: [{ configMapRef: { name: 'app' } }],
        },
      ],
    },
    expected: [cm('app')],
  },
  {
    name: 'keys are the union across references',
    spec: {
      volumes: [
        { name: 'v', secret: { secretName: 'creds', items: [{ key: 'a', path: 'a' }] } },
        {
          name: 'w',
          projected: { sources: [{ secret: { name: 'creds', items: [{ key: 'b', path: 'b' }] } }] },
        },
      ],
      initContainers: [
        {
          name: 'init',
          env: [{ name: 'C', valueFrom: { secretKeyRef: { name: 'creds', key: 'c' } } }],
        },
      ],
      containers: [
        {
          name: 'app',
          env: [
            { name: 'A', valueFrom: { secretKeyRef: { name: 'creds', key: 'a' } } },
            { name: 'D', valueFrom: { secretKeyRef: { name: 'creds', key: 'd' } } },
          ],
        },
      ],
    },
    expected: [secret('creds', ['a', 'b', 'c', 'd'])],
  },
  {
    name: 'optional only when every reference is optional',
    spec: {
      volumes: [{ name: 'v', configMap: { name: 'mixed', optional: true } }],
      containers: [
        {
          name: 'app',
          envFrom: [
            { configMapRef: { name: 'mixed' } },
            { configMapRef: { name: 'both', optional: true } },
          ],
          env: [
            {
              name: 'X',
              valueFrom: { configMapKeyRef: { name: 'both', key: 'x', optional: true } },
            },
          ],
        },
      ],
    },
    expected: [cm('both', 'all', true), cm('mixed')],
  },
  {
    name: 'a ConfigMap and a Secret with the same name are two sources',
    spec: {
      volumes: [
        { name: 'a', configMap: { name: 'shared' } },
        { name: 'b', secret: { secretName: 'shared' } },
      ],
    },
    expected: [cm('shared'), secret('shared')],
  },
];

const annotationRows: Row[] = [
  {
    name: 'include adds a whole, required source',
    spec: {},
    annotations: { [INCLUDE]: 'configmap/extra,secret/api-token' },
    expected: [cm('extra'), secret('api-token')],
  },
  {
    name: 'include widens a keyed, optional reference to whole and required',
    spec: {
      volumes: [
        { name: 'v', configMap: { name: 'app', items: [{ key: 'a', path: 'a' }], optional: true } },
      ],
    },
    annotations: { [INCLUDE]: 'configmap/app' },
    expected: [cm('app')],
  },
  {
    name: 'exclude removes a referenced source',
    spec: {
      volumes: [
        { name: 'a', configMap: { name: 'app' } },
        { name: 'b', secret: { secretName: 'rotating-token' } },
      ],
    },
    annotations: { [EXCLUDE]: 'secret/rotating-token' },
    expected: [cm('app')],
  },
  {
    name: 'exclude names one kind only',
    spec: {
      volumes: [
        { name: 'a', configMap: { name: 'shared' } },
        { name: 'b', secret: { secretName: 'shared' } },
      ],
    },
    annotations: { [EXCLUDE]: 'configmap/shared' },
    expected: [secret('shared')],
  },
  {
    name: 'exclude of something not referenced changes nothing',
    spec: { volumes: [{ name: 'a', configMap: { name: 'app' } }] },
    annotations: { [EXCLUDE]: 'configmap/other,secret/app' },
    expected: [cm('app')],
  },
  {
    name: 'exclude wins over include',
    spec: { volumes: [{ name: 'a', configMap: { name: 'app' } }] },
    annotations: {
      [INCLUDE]: 'secret/extra,configmap/more',
      [EXCLUDE]: 'secret/extra,configmap/app',
    },
    expected: [cm('more')],
  },
  {
    name: 'unrelated annotations are ignored',
    spec: { volumes: [{ name: 'a', configMap: { name: 'app' } }] },
    annotations: { 'example.com/include': 'configmap/other', [INCLUDE.toUpperCase()]: 'secret/x' },
    expected: [cm('app')],
  },
];

const malformedRows: Row[] = [
  { name: 'null spec', spec: null, expected: [] },
  { name: 'undefined spec', spec: undefined, expected: [] },
  { name: 'number spec', spec: 42, expected: [] },
  { name: 'string spec', spec: 'volumes', expected: [] },
  { name: 'array spec', spec: [{ volumes: [{ configMap: { name: 'x' } }] }], expected: [] },
  {
    name: 'lists that are objects, numbers or null',
    spec: { volumes: { configMap: { name: 'x' } }, containers: 3, initContainers: null },
    expected: [],
  },
  {
    name: 'list entries that are not objects',
    spec: {
      volumes: [
        null,
        1,
        'configMap',
        [{ configMap: { name: 'x' } }],
        { configMap: { name: 'ok' } },
      ],
      containers: [
        null,
        7,
        [],
        { name: 'app', envFrom: [null, 'x', 2, { secretRef: { name: 's' } }] },
      ],
    },
    expected: [cm('ok'), secret('s')],
  },
  {
    name: 'references that are arrays, numbers or null',
    spec: {
      volumes: [
        { name: 'a', configMap: [{ name: 'x' }] },
        { name: 'b', secret: 5 },
        { name: 'c', projected: [] },
        { name: 'd', projected: { sources: { configMap: { name: 'y' } } } },
        { name: 'e', projected: { sources: [null, { configMap: null }, { secret: 'z' }] } },
      ],
      containers: [
        {
          name: 'app',
          envFrom: [{ configMapRef: [] }, { secretRef: null }],
          env: [null, { valueFrom: [] }, { valueFrom: { configMapKeyRef: 1, secretKeyRef: [] } }],
        },
      ],
    },
    expected: [],
  },
  {
    name: 'names that are not strings',
    spec: {
      volumes: [
        { name: 'a', configMap: { name: 12 } },
        { name: 'b', secret: { secretName: { nested: 'x' } } },
      ],
      containers: [{ name: 'app', envFrom: [{ configMapRef: { name: ['x'] } }] }],
    },
    expected: [],
  },
  {
    name: 'item and key refs with odd keys keep only string keys',
    spec: {
      volumes: [
        {
          name: 'v',
          configMap: { name: 'app', items: [null, 'a', { key: 5 }, { path: 'p' }, { key: 'ok' }] },
        },
      ],
      containers: [
        {
          name: 'app',
          env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'creds', key: ['k'] } } }],
        },
      ],
    },
    expected: [cm('app', ['ok']), secret('creds', [])],
  },
];

const LIVE = { [LIVE_RELOAD]: 'true' };
/** Volume `files` mounted plainly, `fixed` with subPath, `expr` with subPathExpr; envFrom Secret `env`. */
const liveSpec = {
  volumes: [
    { name: 'files', configMap: { name: 'plain' } },
    {
      name: 'fixed',
      configMap: { name: 'sub', items: [{ key: 'nginx.conf', path: 'nginx.conf' }] },
    },
    { name: 'expr', secret: { secretName: 'per-pod' } },
    { name: 'unmounted', configMap: { name: 'nobody' } },
    {
      name: 'proj',
      projected: {
        sources: [{ configMap: { name: 'proj-plain' } }, { secret: { name: 'proj-s' } }],
      },
    },
  ],
  initContainers: [
    { name: 'init', volumeMounts: [{ name: 'expr', mountPath: '/x', subPathExpr: '$(POD)' }] },
  ],
  containers: [
    {
      name: 'app',
      envFrom: [{ secretRef: { name: 'env' } }],
      env: [{ name: 'K', valueFrom: { configMapKeyRef: { name: 'plain', key: 'mode' } } }],
      volumeMounts: [
        { name: 'files', mountPath: '/etc/app' },
        { name: 'fixed', mountPath: '/etc/nginx/nginx.conf', subPath: 'nginx.conf' },
        { name: 'proj', mountPath: '/etc/proj', subPath: '' },
      ],
    },
  ],
};

const liveReloadRows: Row[] = [
  {
    name: 'without the annotation every volume counts',
    spec: liveSpec,
    expected: [
      cm('nobody'),
      cm('plain'),
      cm('proj-plain'),
      cm('sub', ['nginx.conf']),
      secret('env'),
      secret('per-pod'),
      secret('proj-s'),
    ],
  },
  {
    name: 'live reload: subPath and subPathExpr volumes (init containers too) and env sources count; a plain mount only through its env key',
    spec: liveSpec,
    annotations: LIVE,
    expected: [cm('plain', ['mode']), cm('sub', ['nginx.conf']), secret('env'), secret('per-pod')],
  },
  {
    name: 'live reload: include still counts',
    spec: liveSpec,
    annotations: { ...LIVE, [INCLUDE]: 'configmap/nobody' },
    expected: [
      cm('nobody'),
      cm('plain', ['mode']),
      cm('sub', ['nginx.conf']),
      secret('env'),
      secret('per-pod'),
    ],
  },
  {
    name: 'live reload "false" is the default',
    spec: { volumes: [{ name: 'v', configMap: { name: 'app' } }] },
    annotations: { [LIVE_RELOAD]: 'false' },
    expected: [cm('app')],
  },
];

describe('findSources', () => {
  describe.each([
    ['live reload', liveReloadRows],
    ['volumes', volumeRows],
    ['containers', containerRows],
    ['empty names', emptyNameRows],
    ['merging references', mergeRows],
    ['include and exclude', annotationRows],
    ['malformed specs', malformedRows],
  ])('%s', (_group, rows) => {
    it.each(named(rows))('%s', (_name, { spec, annotations, expected }) => {
      expect(summarize(spec, annotations)).toEqual(expected);
      expect(findSources(spec, annotations).problems).toEqual([]);
    });
  });

  it('defaults to no annotations', () => {
    expect(findSources({ volumes: [{ configMap: { name: 'app' } }] }).sources).toHaveLength(1);
  });

  it('lists each object once however often it is referenced', () => {
    const ref = { configMapRef: { name: 'app' } };
    const spec = {
      volumes: [
        { configMap: { name: 'app' } },
        { configMap: { name: 'app', items: [{ key: 'k' }] } },
      ],
      containers: [{ envFrom: [ref, ref] }, { envFrom: [ref] }],
    };
    expect(findSources(spec, { [INCLUDE]: 'configmap/app' }).sources).toHaveLength(1);
  });

  it.each(
    named<Row & { problems: string[] }>([
      {
        name: 'invalid include entries are reported and ignored',
        spec: { volumes: [{ configMap: { name: 'app' } }] },
        annotations: { [INCLUDE]: 'configmap/ok,deployment/web,secret/' },
        expected: [cm('app'), cm('ok')],
        problems: [
          `${INCLUDE}: ignored 'deployment/web' (expected configmap/NAME or secret/NAME)`,
          `${INCLUDE}: ignored 'secret/' (expected configmap/NAME or secret/NAME)`,
        ],
      },
      {
        name: 'invalid exclude entries are reported and ignored',
        spec: { volumes: [{ configMap: { name: 'app' } }] },
        annotations: { [EXCLUDE]: 'app,secret/a/b,configmap/app' },
        expected: [],
        problems: [
          `${EXCLUDE}: ignored 'app' (expected configmap/NAME or secret/NAME)`,
          `${EXCLUDE}: ignored 'secret/a/b' (expected configmap/NAME or secret/NAME)`,
        ],
      },
      {
        name: 'a live-reload value other than "true"/"false" is reported and every source counts',
        spec: { volumes: [{ name: 'v', configMap: { name: 'app' } }] },
        annotations: { [LIVE_RELOAD]: 'yes' },
        expected: [cm('app')],
        problems: [`${LIVE_RELOAD}: ignored 'yes' (expected "true" or "false")`],
      },
    ]),
  )('%s', (_name, { spec, annotations, expected, problems }) => {
    expect(summarize(spec, annotations)).toEqual(expected);
    expect(findSources(spec, annotations).problems).toEqual(problems);
  });
});

describe('parseSourceList', () => {
  it.each(
    named([
      { name: 'undefined', value: undefined, refs: [], invalid: [] },
      { name: 'empty string', value: '', refs: [], invalid: [] },
      { name: 'one configmap', value: 'configmap/app', refs: [['ConfigMap', 'app']], invalid: [] },
      { name: 'one secret', value: 'secret/creds', refs: [['Secret', 'creds']], invalid: [] },
      {
        name: 'kinds are case-insensitive',
        value: 'ConfigMap/a,SECRET/b,cOnFiGmAp/c',
        refs: [
          ['ConfigMap', 'a'],
          ['Secret', 'b'],
          ['ConfigMap', 'c'],
        ],
        invalid: [],
      },
      {
        name: 'names keep their case',
        value: 'configmap/App',
        refs: [['ConfigMap', 'App']],
        invalid: [],
      },
      {
        name: 'blanks around entries are ignored',
        value: '  configmap/a ,\tsecret/b\n',
        refs: [
          ['ConfigMap', 'a'],
          ['Secret', 'b'],
        ],
        invalid: [],
      },
      {
        name: 'empty entries are ignored',
        value: ',configmap/a,, ,secret/b,',
        refs: [
          ['ConfigMap', 'a'],
          ['Secret', 'b'],
        ],
        invalid: [],
      },
      {
        name: 'dots and dashes in names',
        value: 'configmap/my-app.v2',
        refs: [['ConfigMap', 'my-app.v2']],
        invalid: [],
      },
      {
        name: 'order and duplicates are kept',
        value: 'secret/b,configmap/a,secret/b',
        refs: [
          ['Secret', 'b'],
          ['ConfigMap', 'a'],
          ['Secret', 'b'],
        ],
        invalid: [],
      },
      { name: 'other kind', value: 'deployment/web', refs: [], invalid: ['deployment/web'] },
      { name: 'plural kind', value: 'configmaps/app', refs: [], invalid: ['configmaps/app'] },
      { name: 'kind only', value: 'configmap', refs: [], invalid: ['configmap'] },
      { name: 'no name', value: 'configmap/', refs: [], invalid: ['configmap/'] },
      { name: 'name only', value: '/app', refs: [], invalid: ['/app'] },
      { name: 'namespaced name', value: 'secret/ns/app', refs: [], invalid: ['secret/ns/app'] },
      {
        name: 'blank inside the name',
        value: 'secret/my app',
        refs: [],
        invalid: ['secret/my app'],
      },
      {
        name: 'valid and invalid mixed',
        value: 'configmap/a, bogus ,secret/b',
        refs: [
          ['ConfigMap', 'a'],
          ['Secret', 'b'],
        ],
        invalid: ['bogus'],
      },
    ] satisfies {
      name: string;
      value: string | undefined;
      refs: [SourceKind, string][];
      invalid: string[];
    }[]),
  )('%s', (_name, { value, refs, invalid }) => {
    const parsed = parseSourceList(value);
    expect(parsed.refs.map((ref) => [ref.kind, ref.name])).toEqual(refs);
    expect(parsed.invalid).toEqual(invalid);
  });
});
