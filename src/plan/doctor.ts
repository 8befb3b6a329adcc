// `confighash doctor [-n NAMESPACE]`: is confighash working for this namespace? Each check is
// a line — ok or FAIL, and for a FAIL what to do: the webhook is registered, the namespace is
// opted in (and what its label means), the webhook answers a dry-run probe there, and in a
// follow namespace a follower leads. A check that needs a failed one is skipped.

import {
  ENABLED,
  HANDLED_KINDS,
  NAMESPACE_LABEL,
  namespaceModeOf,
  readWorkload,
  WORKLOAD_OPTED_IN,
  workloadsModeOf,
} from '../workload/index.js';
import type { DoctorCluster } from './ports.js';
import { hashesOf } from './touch-answer.js';

export interface DoctorCheck {
  readonly state: 'ok' | 'FAIL' | 'skip';
  readonly what: string;
  /** For a FAIL: what to do about it. */
  readonly todo?: string;
}

interface DoctorOptions {
  readonly namespace: string;
  /** The MutatingWebhookConfiguration's name (the manifests' and the chart's: confighash). */
  readonly webhookConfiguration: string;
  /** The probe Deployment's name, unused in the namespace: a dry run stores nothing, but may not collide. */
  readonly probeName: string;
}

const DEPLOYMENT = HANDLED_KINDS.find((kind) => kind.kind === 'Deployment')!;

export async function diagnose(
  cluster: DoctorCluster,
  options: DoctorOptions,
  signal: AbortSignal,
): Promise<DoctorCheck[]> {
  const registered = await checkRegistration(cluster, options.webhookConfiguration, signal);
  const opted = await checkNamespace(cluster, options.namespace, signal);
  const reached =
    registered.state === 'ok' && opted.mode !== undefined
      ? await checkReached(cluster, options, signal)
      : skipped('the webhook was not asked', registered.state === 'ok' ? opted.check : registered);
  const checks = [registered, opted.check, reached];
  if (opted.mode === 'follow') checks.push(await checkFollower(cluster, signal));
  return checks;
}

function skipped(what: string, because: DoctorCheck): DoctorCheck {
  return { state: 'skip', what: `${what}: it needs the check above ("${because.what}")` };
}

async function checkRegistration(
  cluster: DoctorCluster,
  name: string,
  signal: AbortSignal,
): Promise<DoctorCheck> {
  const read = await cluster.webhookRegistration(name, signal);
  const configuration = `MutatingWebhookConfiguration ${name}`;
  switch (read.status) {
    case 'found': {
      const { webhooks, failurePolicies, target } = read.value;
      const policies = [...new Set(failurePolicies)].join(', ');
      const count = webhooks === 1 ? '1 webhook' : `${webhooks} webhooks`;
      return {
        state: 'ok',
        what: `${configuration} is registered (${count}, failurePolicy ${policies}, calls ${target})`,
      };
    }
    case 'absent':
      return {
        state: 'FAIL',
        what: `${configuration} is not registered`,
        todo: 'install confighash (docs/install.md), or name your registration with --webhook-configuration',
      };
    case 'failed':
      return {
        state: 'FAIL',
        what: `cannot read ${configuration} (${read.detail})`,
        todo: 'you need get on mutatingwebhookconfigurations.admissionregistration.k8s.io',
      };
  }
}

/** The namespace's label and what it means; `mode` when the namespace is opted in. */
async function checkNamespace(
  cluster: DoctorCluster,
  namespace: string,
  signal: AbortSignal,
): Promise<{ check: DoctorCheck; mode?: 'true' | 'follow' }> {
  const read = await cluster.namespace(namespace, signal);
  if (read.status === 'absent') {
    return {
      check: {
        state: 'FAIL',
        what: `namespace ${namespace} does not exist`,
        todo: 'name another with -n',
      },
    };
  }
  if (read.status === 'failed') {
    return {
      check: {
        state: 'FAIL',
        what: `cannot read namespace ${namespace} (${read.detail})`,
        todo: 'you need get on namespaces',
      },
    };
  }
  const mode = namespaceModeOf(read.value.labels);
  const annotated =
    workloadsModeOf(read.value.labels) === 'annotated'
      ? `; only workloads annotated ${ENABLED}: "${WORKLOAD_OPTED_IN}" are handled (confighash.dev/workloads=annotated)`
      : '';
  switch (mode) {
    case 'none':
      return {
        check: {
          state: 'FAIL',
          what: `namespace ${namespace} is not opted in: the webhook never sees its writes`,
          todo: `kubectl label namespace ${namespace} ${NAMESPACE_LABEL}=true (admission only) or ${NAMESPACE_LABEL}=follow (also follow mode)`,
        },
      };
    case 'true':
      return {
        mode,
        check: {
          state: 'ok',
          what: `namespace ${namespace} is opted in, ${NAMESPACE_LABEL}=true: admission only — a write that reaches the webhook gets the hash of the config as it is then; a config change alone rolls nothing until the next write of the workload (=follow would touch it)${annotated}`,
        },
      };
    case 'follow':
      return {
        mode,
        check: {
          state: 'ok',
          what: `namespace ${namespace} is opted in, ${NAMESPACE_LABEL}=follow: admission, and follow mode — a config change is followed by a touch of the workloads that read it${annotated}`,
        },
      };
  }
}

/** A dry-run create of a probe Deployment that reads an (optional, absent) ConfigMap. */
async function checkReached(
  cluster: DoctorCluster,
  { namespace, probeName }: DoctorOptions,
  signal: AbortSignal,
): Promise<DoctorCheck> {
  const answer = await cluster.dryRunCreate(DEPLOYMENT, namespace, probe(probeName), signal);
  if (answer.status === 'found') {
    const hashes = hashesOf(readWorkload(answer.value.object, DEPLOYMENT));
    if (hashes.templateHash !== null || hashes.adoptedHash !== null) {
      return {
        state: 'ok',
        what: `the webhook answers: a server-side dry-run create of a probe Deployment in ${namespace} came back hashed (nothing was stored)`,
      };
    }
    return {
      state: 'FAIL',
      what: `the webhook did not answer: a dry-run create of a probe Deployment in ${namespace} came back without a hash`,
      todo: 'is confighash running and its Service reachable from the apiserver? With failurePolicy Ignore the apiserver lets writes through unhashed (docs/install.md, "When the apiserver cannot reach the webhook")',
    };
  }
  const detail = answer.status === 'failed' ? answer.detail : 'not found';
  return {
    state: 'FAIL',
    what: `cannot dry-run a probe Deployment in ${namespace} (${detail})`,
    todo:
      detail === 'forbidden'
        ? `you need create on deployments.apps in ${namespace} (a dry run stores nothing); or ask about one workload you may patch: confighash explain deploy/NAME -n ${namespace}`
        : 'the apiserver refused the dry run: its message above says why',
  };
}

function probe(name: string): Record<string, unknown> {
  const labels = { 'app.kubernetes.io/name': 'confighash-doctor' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels, annotations: { [ENABLED]: WORKLOAD_OPTED_IN } },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'probe',
              image: 'confighash-doctor-probe',
              envFrom: [{ configMapRef: { name: `${name}-config`, optional: true } }],
            },
          ],
        },
      },
    },
  };
}

async function checkFollower(cluster: DoctorCluster, signal: AbortSignal): Promise<DoctorCheck> {
  const read = await cluster.followLeader(signal);
  if (read.status !== 'found') {
    const detail = read.status === 'failed' ? read.detail : 'not found';
    return {
      state: 'FAIL',
      what: `cannot read the follower's Lease (${detail})`,
      todo: 'you need get on leases.coordination.k8s.io in its namespace (--lease-namespace)',
    };
  }
  const { lease, holder, vacant } = read.value;
  if (holder !== null) return { state: 'ok', what: `a follower leads: ${holder} (Lease ${lease})` };
  return {
    state: 'FAIL',
    what: `no follower is leading (Lease ${lease}: ${vacant ?? 'no holder'}): config changes are not followed`,
    todo: 'is confighash follow running (docs/follow.md)? Its log says why it does not lead; name another Lease with --lease-namespace and --lease-name',
  };
}
