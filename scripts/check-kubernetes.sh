#!/usr/bin/env bash
# Renders the Kubernetes manifests (deploy/kubernetes: the base and every overlay) with `kubectl kustomize`
# and validates every object against the Kubernetes API schemas of the pinned kubernetes-models package
# (scripts/validate-kubernetes.js); first proves the check refuses known-bad objects and a broken manifest.
# No cluster and no network: kubectl only renders, the schemas are in node_modules.
set -euo pipefail

cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

if ! command -v kubectl >/dev/null; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq
    if apt-cache policy kubectl | grep -q 'Candidate: [0-9]'; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubectl
    fi
  fi
  if ! command -v kubectl >/dev/null; then
    # Debian's own kubernetes-client (1.20) embeds kustomize v2, which reads none of these kustomizations.
    echo "kubectl is missing and no apt source offers the kubectl package: install kubectl 1.27 or later." >&2
    exit 1
  fi
fi
kubectl version --client 2>/dev/null | sed -n '1,2p'

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "Self-test: known-bad objects are refused."
node scripts/validate-kubernetes.js --self-test

echo "Self-test: a broken manifest rendered by kustomize fails the check."
mkdir -p "$work/broken"
cat >"$work/broken/kustomization.yaml" <<'YAML'
resources:
  - deployment.yaml
YAML
cat >"$work/broken/deployment.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: broken
spec:
  selector:
    matchLabels: { app: broken }
  template:
    metadata:
      labels: { app: broken }
    spec:
      containers:
        - name: broken
          image: token-vault
          livenesProbe:
            httpGet: { path: /health/live, port: 3000 }
YAML
kubectl kustomize "$work/broken" >"$work/broken.yaml"
if node scripts/validate-kubernetes.js "$work/broken.yaml" 2>"$work/broken.err"; then
  echo "The check accepted a broken manifest (livenesProbe misspelt)." >&2
  exit 1
fi
sed 's/^/  refused: /' "$work/broken.err"

status=0
for dir in deploy/kubernetes deploy/kubernetes/overlays/*/; do
  dir="${dir%/}"
  echo "Rendering $dir"
  out="$work/$(echo "$dir" | tr '/' '_').yaml"
  kubectl kustomize "$dir" >"$out"
  node scripts/validate-kubernetes.js "$out" || status=1
done
exit "$status"
