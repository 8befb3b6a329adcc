// One HTTP(S) request, its answer read whole: the harness's readiness probes, the
// benchmarks' API calls and the tests' hand-sent AdmissionReviews. A caller that
// needs the connection itself (the certificate served, whether the socket was
// reused, who closed it) or a streamed body uses node:https directly.

import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';

export interface HttpRequestOptions {
  /** GET unless given. */
  readonly method?: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string;
  readonly ca?: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly rejectUnauthorized?: boolean;
  /** `false`: a connection of its own, closed after the answer. */
  readonly agent?: http.Agent | false;
  /** Fails the request when its socket is idle this long. */
  readonly timeoutMs?: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Sends one request to `url` (https: or http:) and resolves with the whole answer, any status. */
export function httpRequest(
  url: string | URL,
  options: HttpRequestOptions = {},
): Promise<HttpResponse> {
  const target = new URL(url);
  const { body, timeoutMs, ...requestOptions } = options;
  const method = options.method ?? 'GET';
  const transport = target.protocol === 'http:' ? http : https;
  return new Promise((resolve, reject) => {
    const request = transport.request(target, { ...requestOptions, method }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    if (timeoutMs !== undefined) {
      request.setTimeout(timeoutMs, () =>
        request.destroy(new Error(`${method} ${target}: no answer in ${timeoutMs / 1000} s`)),
      );
    }
    request.end(body);
  });
}
