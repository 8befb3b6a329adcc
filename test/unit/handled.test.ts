// "Is this workload handled" and "is this fan-out large" (src/workload/handled.ts,
// src/workload/fanout-size.ts; docs/design.md §2, §4, §6): each decision as a table, and
// admission's and plan's entry points giving the table's answer for the same input (follow
// mode's: test/unit/follow/follower.test.ts, "per-workload opt-in").

import { describe, expect, it } from 'vitest';
import { createMutator } from '../../src/admission/mutate.js';
import { startNamespaceCheck } from '../../src/admission/namespace-check.js';
import type { NamespaceApi } from '../../src/admission/ports.js';
import { parseManifests, planChanges } from '../../src/plan/index.js';
import {
  type Asker,
  decideHandled,
  EVERY_KNOWN_KIND,
  excludedNamespaceSet,
  isLargeFanout,
  type NamespaceStanding,
  type NotHandledReason,
  namespaceStandingOf,
} from '../../src/workload/index.js';
import { MemoryPlanCluster } from '../support/memory-plan-cluster.js';
import { MemorySource } from '../support/memory-source.js';
import { admissionRequest, NAMESPACE, workload } from '../support/workloads.js';

const NEVER = new AbortController().signal;
const KEY = Buffer.alloc(32, 7);
const ENABLED = 'confighash.dev/enabled';
const WORKLOADS = 'confighash.dev/workloads';
const ANNOTATED_ONLY = { [WORKLOADS]: 'annotated' };

type Labels = Record<string, string>;
const labelled = (mode?: string, workloads: Labels = {}): Labels => ({
  ...(mode === undefined ? {} : { [ENABLED]: mode }),
  ...workloads,
});
const annotated = (value?: string): Labels => (value === undefined ? {} : { [ENABLED]: value });

describe('the namespace standing, per asker', () => {
  const excluded = excludedNamespaceSet(['confighash', 'batch']);
  const rows: [string, Asker, string, Labels, NamespaceStanding][] = [
    ['no label: admission', 'admission', 'shop', labelled(), 'not-opted-in'],
    ['no label: follow', 'follow', 'shop', labelled(), 'not-opted-in'],
    ['"true": admission', 'admission', 'shop', labelled('true'), 'all'],
    ['"true": not follow mode', 'follow', 'shop', labelled('true'), 'not-opted-in'],
    ['"follow": admission', 'admission', 'shop', labelled('follow'), 'all'],
    ['"follow": follow', 'follow', 'shop', labelled('follow'), 'all'],
    ['another value ("yes")', 'admission', 'shop', labelled('yes'), 'not-opted-in'],
    ['"true", annotated', 'admission', 'shop', labelled('true', ANNOTATED_ONLY), 'annotated'],
    ['"follow", annotated', 'follow', 'shop', labelled('follow', ANNOTATED_ONLY), 'annotated'],
    [
      '"true", workloads another value',
      'admission',
      'shop',
      labelled('true', { [WORKLOADS]: 'all' }),
      'all',
    ],
    [
      'annotated without opt-in',
      'admission',
      'shop',
      labelled(undefined, ANNOTATED_ONLY),
      'not-opted-in',
    ],
    ['kube-system, labelled', 'admission', 'kube-system', labelled('true'), 'excluded'],
    ['kube-system, follow', 'follow', 'kube-system', labelled('follow'), 'excluded'],
    ['--excluded-namespace, labelled', 'admission', 'batch', labelled('true'), 'excluded'],
    ['the webhook’s own, follow', 'follow', 'confighash', labelled('follow'), 'excluded'],
  ];
  it.each(rows)('%s', (_name, asker, namespace, labels, standing) => {
    expect(namespaceStandingOf(asker, namespace, labels, excluded)).toBe(standing);
  });

  it('kube-system is excluded with no --excluded-namespace at all', () => {
    expect(excludedNamespaceSet().has('kube-system')).toBe(true);
  });
});

describe('the decision table', () => {
  const rows: [string, Labels, NamespaceStanding, NotHandledReason | undefined][] = [
    ['all workloads, not annotated', annotated(), 'all', undefined],
    ['all workloads, annotated "true"', annotated('true'), 'all', undefined],
    ['all workloads, opted out', annotated('false'), 'all', 'opted-out'],
    ['all workloads, another value', annotated('yes'), 'all', undefined],
    ['annotated only, not annotated', annotated(), 'annotated', 'not-annotated'],
    ['annotated only, annotated "true"', annotated('true'), 'annotated', undefined],
    ['annotated only, opted out', annotated('false'), 'annotated', 'opted-out'],
    ['annotated only, another value', annotated('yes'), 'annotated', 'not-annotated'],
    ['not opted in, not annotated', annotated(), 'not-opted-in', 'namespace-not-opted-in'],
    [
      'not opted in, annotated "true": never opens it',
      annotated('true'),
      'not-opted-in',
      'namespace-not-opted-in',
    ],
    [
      'not opted in, opted out: its own word first',
      annotated('false'),
      'not-opted-in',
      'opted-out',
    ],
    ['excluded, not annotated', annotated(), 'excluded', 'namespace-excluded'],
    ['excluded, annotated "true"', annotated('true'), 'excluded', 'namespace-excluded'],
    ['excluded, opted out', annotated('false'), 'excluded', 'opted-out'],
  ];
  it.each(rows)('%s', (_name, annotations, standing, reason) => {
    const decided = decideHandled(annotations, standing);
    expect(decided).toEqual(reason === undefined ? { handled: true } : { handled: false, reason });
  });
});

describe('a large fan-out', () => {
  const rows: [string, number, number, boolean][] = [
    ['below the limit', 2, 3, false],
    ['at the limit', 3, 3, false],
    ['above the limit', 4, 3, true],
    ['one reader above a limit of 0: off', 1, 0, false],
    ['many readers, limit 0: off', 10_000, 0, false],
    ['limit 1, two readers', 2, 1, true],
  ];
  it.each(rows)('%s', (_name, readers, maxFanout, large) => {
    expect(isLargeFanout(readers, maxFanout)).toBe(large);
  });
});

// --- the users: the same input, the table's answer -----------------------------------------

/** Every combination that matters to admission and plan: the namespace's labels and name, the workload's annotation. */
const namespaces: [string, string, Labels][] = [
  ['no label', NAMESPACE, labelled()],
  ['"true"', NAMESPACE, labelled('true')],
  ['"follow"', NAMESPACE, labelled('follow')],
  ['"true", annotated', NAMESPACE, labelled('true', ANNOTATED_ONLY)],
  ['"follow", annotated', NAMESPACE, labelled('follow', ANNOTATED_ONLY)],
  ['kube-system, "true"', 'kube-system', labelled('true')],
];
const annotations: [string, string | undefined][] = [
  ['not annotated', undefined],
  ['annotated "true"', 'true'],
  ['opted out', 'false'],
];
const cases = namespaces.flatMap(([ns, name, labels]) =>
  annotations.map(([a, value]) => [`${ns}, ${a}`, name, labels, value] as const),
);

/** What the table says admission does with a workload of these annotations in this namespace. */
function tableSays(asker: Asker, name: string, labels: Labels, value: string | undefined) {
  return decideHandled(
    annotated(value),
    namespaceStandingOf(asker, name, labels, excludedNamespaceSet()),
  );
}

/** A NamespaceApi of one namespace, read live (its watch lists nothing). */
function oneNamespace(name: string, labels: Labels): NamespaceApi {
  return {
    get: async (asked) =>
      asked === name ? { status: 'found', namespace: { name, labels } } : { status: 'absent' },
    optedIn: (handler) => ({
      list: async () => {
        handler.list().end();
        return '1';
      },
      watch: (resourceVersion, signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => resolve({ resourceVersion, expired: false }), {
            once: true,
          }),
        ),
    }),
  };
}

describe('admission asks the table', () => {
  const SKIP_CODE: Record<NotHandledReason, string> = {
    'opted-out': 'not-handled',
    'not-annotated': 'not-handled',
    'namespace-excluded': 'namespace-not-opted-in',
    'namespace-not-opted-in': 'namespace-not-opted-in',
  };
  it.each(cases)('%s', async (_name, namespace, labels, value) => {
    const check = startNamespaceCheck({ api: oneNamespace(namespace, labels), excluded: [] });
    const source = new MemorySource();
    const mutator = createMutator({ configSource: source, hashKey: KEY, namespaces: check });
    const object = workload({ annotations: annotated(value) });
    (object.metadata as Labels).namespace = namespace;
    const result = await mutator.review({ ...admissionRequest({ object }), namespace }, NEVER);
    await check.stop();
    const said = tableSays('admission', namespace, labels, value);
    if (said.handled) expect(result.outcome).not.toBe('skipped');
    else expect(result).toMatchObject({ outcome: 'skipped', skipCode: SKIP_CODE[said.reason] });
  });
});

describe('plan asks the table', () => {
  const LINE: Record<NotHandledReason, RegExp> = {
    'opted-out': /^opted out: /,
    'not-annotated': /^not handled: /,
    // plan cannot read the webhook's exclusions: it goes by the labels, kube-system's too.
    'namespace-excluded': /./,
    'namespace-not-opted-in': /is not opted in/,
  };
  it.each(cases.filter(([, namespace]) => namespace !== 'kube-system'))(
    '%s',
    async (_name, namespace, labels, value) => {
      const cluster = new MemoryPlanCluster().withNamespace(namespace, labels);
      const object = workload({ annotations: annotated(value) });
      const parsed = parseManifests(JSON.stringify(object), namespace);
      if (!parsed.ok) throw new Error(parsed.error);
      const plan = await planChanges(
        parsed.manifests,
        cluster,
        { clientSide: false, kinds: EVERY_KNOWN_KIND, maxFanout: 0 },
        NEVER,
      );
      const [planned] = plan.workloads;
      const said = tableSays('admission', namespace, labels, value);
      if (said.handled) {
        expect(planned!.reasons.join('\n')).not.toMatch(/^(opted out|not handled)|not opted in/m);
      } else {
        expect(planned!.verdict).toBe('no-roll');
        expect(planned!.reasons[0]).toMatch(LINE[said.reason]);
      }
    },
  );
});
