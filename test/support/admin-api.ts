// The admin credentials of a harness kubeconfig (tools/cluster/control-plane.ts writes it as
// JSON, for a node's control plane too), for what the tests send the apiserver themselves.

import { readFile } from 'node:fs/promises';

export interface AdminTls {
  readonly server: URL;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

export async function adminTls(kubeconfig: string): Promise<AdminTls> {
  const config = JSON.parse(await readFile(kubeconfig, 'utf8'));
  const decode = (b64: string) => Buffer.from(b64, 'base64').toString();
  return {
    server: new URL(config.clusters[0].cluster.server),
    ca: decode(config.clusters[0].cluster['certificate-authority-data']),
    cert: decode(config.users[0].user['client-certificate-data']),
    key: decode(config.users[0].user['client-key-data']),
  };
}
