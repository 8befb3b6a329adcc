// node:http as CommonJS gives it. An ES import of a built-in module reads every one of its
// exports, and on Node 22 and later three of node:http's (WebSocket, CloseEvent,
// MessageEvent) are getters that load Node's bundled undici: 9.5 MB of resident memory in a
// bare process on the image's Node, for a client confighash never uses (BENCHMARKS.md, "HTTP/2
// to the API server"). Every value use of node:http in src/ comes from here; type imports erase.

export const http = process.getBuiltinModule('node:http');
