# syntax=docker/dockerfile:1
# The annals service as an image: compiled in one stage, production dependencies in another, and a runtime
# stage with neither the compiler nor the build toolchain. Runs as the unprivileged `node` user, with node as
# PID 1 (it handles SIGTERM: drains requests, stops the projectors at a committed checkpoint, closes the
# stores), data in the /data volume, and a HEALTHCHECK on /healthz.
#
#   docker build -t annals .
#   docker run -p 8080:8080 -v annals-data:/data annals
#   docker run --rm -v annals-data:/data annals annals projections status --json     # operator commands
#
# Give `docker stop` more than SHUTDOWN_DEADLINE_MS (15 s by default) before it kills: docker stop -t 30.

ARG NODE_IMAGE=node:20-bookworm-slim

# 1. Compile TypeScript to dist/, then the typed client the console is built on, then the web console into
#    console/dist (dev dependencies: typescript, vite and the console's packages). No install scripts are
#    needed for that.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json ./clients/typescript/
COPY console/package.json ./console/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY projections ./projections
COPY clients/typescript ./clients/typescript
COPY console ./console
RUN npm run build && npm run build --workspace clients/typescript && npm run build:console

# 2. Production dependencies only. better-sqlite3, zstd-napi and pkcs11js are the ones with an install step (native
#    addons: a prebuilt binary when one can be downloaded, else compiled from source), hence the toolchain here
#    (and only here).
FROM ${NODE_IMAGE} AS production-dependencies
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json ./clients/typescript/
COPY console/package.json ./console/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 zstd-napi pkcs11js \
 && npm cache clean --force

# 3. What runs.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
COPY package.json ./
COPY bin ./bin
COPY docs/help ./docs/help
# The operator CLI on PATH (`annals ...`); the data folder private to the service's user.
RUN ln -s /app/bin/annals.mjs /usr/local/bin/annals \
 && ln -s /app/bin/annals-mcp.mjs /usr/local/bin/annals-mcp \
 && install -d -m 0700 -o node -g node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
