// The limits every arrival at every port of both processes is held to (docs/design.md §4
// "Bounds"): how many connections, how large headers and a body may be, how many body bytes
// are read at once in each share and per client address, and how long a request may take
// to arrive.

/** Two 3 MiB objects (object + oldObject) plus the envelope (docs/design.md §4). */
export const MAX_BODY_BYTES = 7 * 1024 * 1024;
/**
 * A body of at most this is small and takes only from the small share (body-budget.ts):
 * 128 KiB holds an UPDATE's object and oldObject, managedFields and all, of any but an
 * unusually big workload, where the reviews the apiserver sends are a few KiB. Kept low,
 * because what fills the small share is small bodies: the lower it is, the more
 * connections a caller needs to fill it (SMALL_BODY_BYTES_IN_FLIGHT / SMALL_BODY_BYTES).
 */
export const SMALL_BODY_BYTES = 128 * 1024;
/**
 * The small share: 128 small bodies of the largest size at once, thousands of a few KiB.
 * No large body takes from it, so however large bodies are declared and trickled, a
 * small review never waits behind them.
 */
export const SMALL_BODY_BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/**
 * The large share: two 7 MiB reviews at once. What bursts of 7 MiB reviews peak at with
 * this share, against no budget and one budget for every size, is bench scenario 9
 * (BENCHMARKS.md): within the chart's 256Mi, the garbage collector's timing spreads it
 * more than the budget does.
 */
export const LARGE_BODY_BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/**
 * Large bytes one client address may hold or wait for: the large share's worth, so no
 * address queues more than the share can ever let in, and a request past it is refused
 * at once rather than left to wait for the arrival limit.
 */
export const LARGE_BODY_BYTES_PER_ADDRESS = LARGE_BODY_BYTES_IN_FLIGHT;
/**
 * Small bytes one client address may hold or wait for: a quarter of the small share, so
 * one caller that trickles small bodies cannot fill it, and the apiserver's own reviews
 * (each apiserver is one address) never come near it: 32 concurrent reviews of a few KiB
 * are well under 1 MiB, and it takes 32 of the largest small size at once to reach it.
 * Past it a small body is refused at once (503), as a large one is.
 */
export const SMALL_BODY_BYTES_PER_ADDRESS = SMALL_BODY_BYTES_IN_FLIGHT / 4;
/** Longer than the apiserver's 90 s idle timeout, so it is always the one to close. */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;
/**
 * Headers, and the whole request with its body, must arrive within this
 * (docs/design.md §4 "Bounds"): a client that trickles a 7 MiB body is cut off (408)
 * rather than holding its buffers for ever. The apiserver sends a review at once.
 */
export const REQUEST_ARRIVAL_MS = 10_000;
/**
 * Node checks those timeouts on a timer (30 s by default, so a 10 s limit
 * would fire at 10–40 s). Checked this often, with the limits two checks below
 * REQUEST_ARRIVAL_MS, a slow client is cut off within it whatever the timer's
 * phase (the cut-off times measured are in BENCHMARKS.md). An idle keep-alive connection is not
 * a request: keepAliveTimeout governs it.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 250;
export const ARRIVAL_LIMIT_MS = REQUEST_ARRIVAL_MS - 2 * TIMEOUT_CHECK_INTERVAL_MS;
/**
 * Node's headersTimeout and requestTimeout start once TLS is up; a handshake
 * that never ends is cut off by this instead (Node's default: 120 s).
 */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * Connections open at once on one port, idle keep-alive ones included: each holds a TLS
 * session and its buffers (tens of KiB), so a thousand stay well inside the pod's memory
 * limit. Node drops the ones past it as they arrive.
 */
export const MAX_CONNECTIONS = 1024;
/**
 * Connections open at once from one client address: a quarter of MAX_CONNECTIONS, so it
 * takes four addresses to fill the port. The apiserver is one address and opens a
 * connection per review in flight (it speaks HTTP/1.1 to the webhook), so this stays far
 * above any burst of reviews it sends; a connection past it is closed before its handshake
 * and its review, if it was one, fails open (counted as connections-per-address).
 */
export const CONNECTIONS_PER_ADDRESS = MAX_CONNECTIONS / 4;
/**
 * A request's headers, request line included. The apiserver's, the kubelet's and
 * Prometheus's are well under 1 KiB; Node's own default is 16 KiB.
 */
export const MAX_HEADER_BYTES = 8 * 1024;
