// Optional apiserver authentication (docs/design.md §7, §10 "a caller that is not the apiserver at
// all"), with the apiserver's side real: a control plane of this file's own, started with
// --admission-control-config-file (a setting of the apiserver's, so the suite's shared one
// cannot have it), whose WebhookAdmissionConfiguration names a kubeconfig with a client
// certificate for the webhook — by the user name the apiserver looks up for a URL webhook,
// `HOST:PORT` (k8s.io/apiserver/pkg/util/webhook/authentication.go). The webhook runs with
// --client-ca-file: a Deployment written through the apiserver is hashed as usual, while a
// review POSTed straight to the port without that certificate, or with one of another CA,
// fails its TLS handshake. The same POST to a webhook without --client-ca-file is answered.

import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateAuthority } from '../../src/certs/generate.js';
import { type ControlPlane, startControlPlane } from '../../tools/cluster/control-plane.js';
import { httpRequest } from '../../tools/cluster/http.js';
import { type Kubectl, kubectlFor, strictKubectl } from '../../tools/cluster/kubectl.js';
import { generateClientCertificate } from '../../tools/cluster/pki.js';
import { type HeldPort, holdFreePort } from '../../tools/cluster/ports.js';
import {
  type LocalWebhook,
  registerLocalWebhook,
  startLocalWebhook,
} from '../../tools/cluster/webhook.js';
import { configMap, namespace, secret, workload, yamlDocuments } from '../support/e2e.js';
import { verboseLog } from '../support/per-worker.js';
import { admissionReview } from '../support/workloads.js';

const NS = 'client-auth';

let dir: string;
let controlPlane: ControlPlane | undefined;
let kubectl: Kubectl;
let k: (args: readonly string[], input?: string) => Promise<string>;
let webhook: LocalWebhook | undefined;
let open: LocalWebhook | undefined;
/**
 * The webhook's ports, named in the apiserver's configuration before it starts: held until the
 * webhook starts, for while the control plane starts other processes ask the kernel for ports.
 */
let heldPorts: HeldPort[] = [];

/** The kubeconfig the apiserver reads for its webhook calls: one user, named as it looks it up. */
function webhookKubeconfig(hostPort: string, certificate: { cert: string; key: string }): string {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    users: [
      {
        name: hostPort,
        user: {
          'client-certificate-data': b64(certificate.cert),
          'client-key-data': b64(certificate.key),
        },
      },
    ],
  });
}

function admissionConfiguration(kubeconfigFile: string): string {
  return JSON.stringify({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: [
      {
        name: 'MutatingAdmissionWebhook',
        configuration: {
          apiVersion: 'apiserver.config.k8s.io/v1',
          kind: 'WebhookAdmissionConfiguration',
          kubeConfigFile: kubeconfigFile,
        },
      },
    ],
  });
}

beforeAll(async () => {
  const log = verboseLog();
  dir = await mkdtemp(join(tmpdir(), 'confighash-client-auth-'));
  const clientCa = await generateCertificateAuthority('apiserver client CA', 1);
  const apiserverClient = await generateClientCertificate(clientCa, 'kube-apiserver', []);
  heldPorts = [await holdFreePort(), await holdFreePort()];
  const [port, probePort] = heldPorts.map((held) => held.port) as [number, number];
  const files = {
    clientCa: join(dir, 'client-ca.crt'),
    kubeconfig: join(dir, 'webhook.kubeconfig'),
    admission: join(dir, 'admission.json'),
  };
  await writeFile(files.clientCa, clientCa.cert);
  await writeFile(files.kubeconfig, webhookKubeconfig(`127.0.0.1:${port}`, apiserverClient), {
    mode: 0o600,
  });
  await writeFile(files.admission, admissionConfiguration(files.kubeconfig));
  controlPlane = await startControlPlane({
    log,
    apiserverFlags: [`--admission-control-config-file=${files.admission}`],
  });
  kubectl = kubectlFor(controlPlane.kubeconfig);
  k = strictKubectl(kubectl);
  const options = { kubeconfig: controlPlane.kubeconfig, log };
  await releaseHeldPorts();
  [webhook, open] = await Promise.all([
    startLocalWebhook({
      ...options,
      dir,
      port,
      clientAuth: { caFile: files.clientCa, probePort },
    }),
    mkdir(join(dir, 'open')).then(() =>
      startLocalWebhook({ ...options, dir: join(dir, 'open'), name: 'confighash-open' }),
    ),
  ]);
  await registerLocalWebhook(kubectl, webhook);
});

async function releaseHeldPorts(): Promise<void> {
  await Promise.all(heldPorts.map((held) => held.release()));
}

afterAll(async () => {
  await releaseHeldPorts();
  await open?.stop();
  await webhook?.stop();
  await controlPlane?.stop();
  if (dir && !process.env.CONFIGHASH_KEEP_LOGS) await rm(dir, { recursive: true, force: true });
});

/** POSTs a review straight to a webhook's port; the HTTP status, or a rejection when there is no HTTP. */
async function postReview(target: LocalWebhook, certificate?: { cert: string; key: string }) {
  return httpRequest(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(admissionReview()),
    ca: await readFile(join(target.certsDir, 'ca.crt')),
    ...certificate,
    agent: false,
    timeoutMs: 5000,
  }).then((response) => response.status);
}

const REFUSED_AT_TLS = /certificate required|unknown ca|ECONNRESET|socket hang up|EPIPE/i;

describe('the apiserver presents a client certificate; nobody else gets in', () => {
  it('hashes a Deployment written through the apiserver', async () => {
    await k(
      ['apply', '--server-side', '-f', '-'],
      yamlDocuments(
        namespace(NS, 'true'),
        configMap(NS, 'web-config', { mode: 'fast' }),
        secret(NS, 'web-secret', { token: 't' }),
      ),
    );
    await k(['apply', '--server-side', '-f', '-'], yamlDocuments(workload(NS, 'web')));
    const deployment = JSON.parse(await k(['get', '-n', NS, 'deployment', 'web', '-o', 'json']));
    const annotations = deployment.spec.template.metadata.annotations ?? {};
    expect(annotations['confighash.dev/hash']).toMatch(/\S/);
    expect(annotations['confighash.dev/sources']).toBe('configmap/web-config,secret/web-secret');
  });

  it('refuses a POST without a client certificate at TLS: no HTTP status at all', async () => {
    await expect(postReview(webhook!)).rejects.toThrow(REFUSED_AT_TLS);
  });

  it('refuses a POST with a client certificate of another CA at TLS', async () => {
    const other = await generateCertificateAuthority('another CA', 1);
    const stranger = await generateClientCertificate(other, 'kube-apiserver', []);
    await expect(postReview(webhook!, stranger)).rejects.toThrow(REFUSED_AT_TLS);
  });

  it('without --client-ca-file (the control), the same POST is answered', async () => {
    expect(await postReview(open!)).toBe(200);
  });
});
