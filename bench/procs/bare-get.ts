// A bare node:http GET as the bench's baselines make it: over `agent`, the body
// read whole and parsed as JSON, nothing else (floor (b)'s way of reading a source).
// An https.Agent's GETs go over TLS.

import http from 'node:http';
import https from 'node:https';

export type BareGet = (path: string) => Promise<unknown>;

export function bareGet(
  agent: http.Agent,
  target: { readonly hostname: string; readonly port: number | string },
  headers: Readonly<Record<string, string>>,
): BareGet {
  const { hostname, port } = target;
  const send = agent instanceof https.Agent ? https.request : http.request;
  return (path) =>
    new Promise((resolve, reject) => {
      const request = send({ hostname, port, path, agent, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end();
    });
}
