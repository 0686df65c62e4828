# syntax=docker/dockerfile:1
# Gatehouse's image (docs/operations.md, "The image"). Three stages: `build` compiles dist/ with
# the development dependencies; `deps` installs the production dependencies alone; the runtime
# stage holds those two, bin/ and package.json, runs as the unprivileged `node` user, keeps the
# embedded database (GATEHOUSE_DATA_DIR) in the /data volume, and starts `gatehouse serve`.
# test/ops/image.test.ts checks this file's structure and runs its exact start command and
# environment from a production-only install (no container engine runs on the CI machines).
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# the prepare script (the build) needs src/, not copied yet: it runs below
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/build.mjs
COPY src src
# the commit shown by `gatehouse --version` and the build info (no .git in the context)
ARG GATEHOUSE_REVISION=unknown
RUN GATEHOUSE_REVISION="${GATEHOUSE_REVISION}" node scripts/build.mjs --force

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    GATEHOUSE_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# /readyz: the process answers and its database does (node, not curl: the slim image has none)
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "bin/healthcheck.js"]
ENTRYPOINT ["node", "bin/gatehouse.js", "serve"]
