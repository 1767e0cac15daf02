# syntax=docker/dockerfile:1
# tbench-server (entrypoint) with tbench inside, on onnxruntime-node's CPU provider by default.
#
#   docker build -t tbench-server:0.1.0 .
#   docker run --rm -p 8000-8002:8000-8002 tbench-server:0.1.0          # serves the bundled /models
#   docker run --rm --entrypoint tbench tbench-server:0.1.0 --help       # the load generator
#
# CUDA execution provider: --build-arg ONNXRUNTIME_EP=cuda12 fetches onnxruntime-node's CUDA 12 binaries at
# build time (the build needs network access for that); the host needs the NVIDIA container toolkit and the
# runtime image needs CUDA 12 and cuDNN 9 libraries: pass --build-arg RUNTIME_IMAGE=<a Node 22 image that
# has them>. Without them tbench-server says why and runs KIND_GPU instances on CPU (see the server README).
#
# Both stages use the same Node LTS line and Debian release (bookworm, as CI) so the native onnxruntime
# binary built against the build stage's glibc runs in the runtime stage.
ARG NODE_IMAGE=node:22-bookworm-slim
ARG RUNTIME_IMAGE=${NODE_IMAGE}

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# Manifests first: the dependency layer is rebuilt only when they change.
COPY package.json package-lock.json .npmrc ./
COPY packages/proto/package.json packages/proto/
COPY packages/client/package.json packages/client/
COPY packages/server/package.json packages/server/
COPY packages/tbench/package.json packages/tbench/
COPY examples/model-builder/package.json examples/model-builder/
# .npmrc already sets ignore-scripts; the variable also stops onnxruntime-node's installer from fetching CUDA
# binaries should the script run anyway. The CPU provider ships inside the package.
ENV ONNXRUNTIME_NODE_INSTALL=skip
RUN npm ci --no-audit --no-fund
COPY . .
# Compile every workspace (dist/ is what the bins load) and generate the bundled model repository.
RUN npm run build && npm run models
ARG ONNXRUNTIME_EP=cpu
RUN case "$ONNXRUNTIME_EP" in \
      cpu) ;; \
      cuda12) ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js ;; \
      *) echo "ONNXRUNTIME_EP: expected cpu or cuda12, got '$ONNXRUNTIME_EP'" >&2; exit 1 ;; \
    esac
# Runtime dependencies only; the workspace links in node_modules/@tbench stay. src/ stays too: dist/ loads
# @tbench/proto's generated code from src/gen, and the source maps point into src/.
RUN npm prune --omit=dev --no-audit --no-fund \
  && rm -rf packages/*/bench packages/*/*.tsbuildinfo

FROM ${RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production \
    PATH=/app/node_modules/.bin:$PATH
WORKDIR /app
# Owned by root and read-only to the server's user: the process cannot rewrite its own code or models.
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/packages ./packages
COPY --from=build /src/examples/models /models
# The node image's unprivileged user (uid 1000).
USER node
EXPOSE 8000 8001 8002
HEALTHCHECK --interval=5s --timeout=3s --retries=30 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8000/v2/health/ready').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# tbench-server binds loopback by default (so a test server is never exposed by accident); in a container it
# must listen on every interface. gRPC and metrics follow --http-address.
ENTRYPOINT ["tbench-server"]
CMD ["--model-repository=/models", "--http-address=0.0.0.0"]
