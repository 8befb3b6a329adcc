# syntax=docker/dockerfile:1
# confighash: the admission webhook image. Node.js 24 LTS (the runtime CI also
# runs the unit and integration suites on, see .ci/run), production dependencies
# only, non-root, and nothing at runtime but node and the app: no shell, no
# package manager (distroless). Build: docker build -t confighash:dev .
# tools/image/build.sh (npm run image) builds the same contents without Docker, and
# test/e2e/image.test.ts compares its image with this file.
#
# The final base is pinned by tag; pin it by digest as well in your registry
# mirror (FROM ...:nonroot@sha256:...) for reproducible builds.

ARG NODE_VERSION=24.22.3

# --- build: all dependencies, TypeScript → dist/ ------------------------------
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the package's own `prepare` (a build) needs src/, copied below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# --- production dependencies only ---------------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime ------------------------------------------------------------------
# distroless cc: glibc, libstdc++ and libgcc, which node links, and nothing to run
# but what is copied in. Node itself comes from the build stage, so the runtime is
# exactly ARG NODE_VERSION (distroless/nodejs24 ships whichever 24.x it has) at the
# path distroless/nodejs uses.
# nonroot: uid/gid 65532, the numeric user the manifests' securityContext names.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /usr/local/bin/node /nodejs/bin/node
WORKDIR /app
ENV NODE_ENV=production
# package.json carries "type": "module", which dist/*.js needs.
COPY --from=deps /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
USER 65532:65532
EXPOSE 8443
# Exec form: node is PID 1 and receives SIGTERM itself (graceful shutdown).
# Flags or CONFIGHASH_* environment variables configure `serve` (see --help).
# --max-old-space-size: Node sizes its heap from the container's limit (256Mi in the
# manifests), so V8 would let garbage fill it before collecting and the kernel kills the pod
# first; at 128 MB a burst of 64 concurrent 7 MiB reviews peaks at 219–240 MiB in that limit
# (bench scenario 9).
# --max-semi-space-size: in that limit Node 24 would pick a 1 MB semi-space, and a review's
# garbage outgrows it: a review took twice the CPU it takes with 8 MB (docs/design.md §11).
# tools/image/build.sh sets the same entrypoint.
ENTRYPOINT ["/nodejs/bin/node", "--max-old-space-size=128", "--max-semi-space-size=8", "/app/dist/main.js", "serve"]
