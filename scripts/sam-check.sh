#!/usr/bin/env bash
# Checks template.yaml the way a deploy would: cfn-lint, then SAM's validation, then a real build.
# SAM CLI is not in the project venv (its pins clash with moto's): take it from $SAM or PATH
# (`make tools` installs aws-sam-cli into .venv-tools). The build needs no container on any
# machine: the functions use this machine's python3.13 (the template's Runtime), and each layer's
# Makefile installs the arm64 (manylinux aarch64, cp313) wheels and precompiles them.
set -euo pipefail

cd "$(dirname "$0")/.."
export SAM_CLI_TELEMETRY=0

SAM="${SAM:-$(command -v sam || true)}"
if [[ -z "$SAM" || ! -x "$SAM" ]]; then
  echo "sam-check: no SAM CLI: set SAM=/path/to/sam or put sam on PATH (make tools)" >&2
  exit 2
fi
CFN_LINT="${CFN_LINT:-}"
if [[ -z "$CFN_LINT" ]]; then
  if [[ -x .venv/bin/cfn-lint ]]; then CFN_LINT=.venv/bin/cfn-lint; else CFN_LINT="$(command -v cfn-lint || true)"; fi
fi
if [[ -z "$CFN_LINT" ]]; then
  echo "sam-check: no cfn-lint: install the dev extras (pip install -e '.[dev]')" >&2
  exit 2
fi

build_dir="$(mktemp -d "${TMPDIR:-/tmp}/heed-sam-build.XXXXXX")"
trap 'rm -rf "$build_dir"' EXIT

echo "== cfn-lint template.yaml"          # first: fails fast, no warnings tolerated
"$CFN_LINT" template.yaml

echo "== sam validate --lint"
"$SAM" validate --lint --template-file template.yaml

echo "== sam build (no container, no cache) into $build_dir"
"$SAM" build --template-file template.yaml --build-dir "$build_dir" --no-cached

echo "sam-check: ok"
