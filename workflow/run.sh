#!/usr/bin/env bash
# Run the workflow, or resume it after a crash or kill: workflow/run.sh [snakemake arguments, e.g. --cores all].
#
# Snakemake leaves its directory lock behind when it is killed, and the next run refuses to start. This script holds
# a kernel lock (flock) for the whole run; the kernel drops it when the holder dies, however it dies. So when the
# flock is free no run is alive here, and the stale Snakemake lock can be cleared safely; when it is taken, another
# run is alive and this one stops. Incomplete outputs of the killed run are redone (--rerun-incomplete).
set -euo pipefail
snakemake=${SNAKEMAKE:-snakemake}
mkdir -p .snakemake
exec 9>.snakemake/run.flock
if ! flock --nonblock 9; then
    echo "run.sh: another run of this workflow is still going in $(pwd); wait for it or stop it first" >&2
    exit 1
fi
"$snakemake" --unlock "$@" > /dev/null 2>&1 || true
exec "$snakemake" --rerun-incomplete "$@"
