#!/usr/bin/env bash
# The monitoring kit (deploy/monitoring): the alert rules load in Prometheus (`promtool check rules`) and
# each alert fires, and stays quiet, where its case file says (`promtool test rules`). promtool comes from
# Debian's prometheus package, installed here when missing.
set -euo pipefail

cd "$(dirname "$0")/../deploy/monitoring"
if ! command -v promtool >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus
fi
promtool --version | sed -n 1p
promtool check rules alerts.yml
promtool test rules tests/*.yml
