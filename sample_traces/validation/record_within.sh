#!/usr/bin/env bash
# Record a hold-out set's workloads one by one within a time budget, each into its own tar, so
# that a lease cut short still brings back every workload it finished:
#
#   CAP=120 bash sample_traces/validation/record_within.sh OUT_DIR RECORD_SCRIPT BUDGET_S NAME...
#
# RECORD_SCRIPT is a set's record_holdoutNN.sh. Each NAME is recorded by it alone (its own
# `traceinspect profile` run, capped at CAP seconds) and packed as OUT_DIR/NAME.tar, a
# validation.tar holding NAME/ and environment.json: unpack each into the set's folder. No
# workload starts once BUDGET_S - CAP seconds have passed; those are listed as skipped.
set -uo pipefail
out=${1:?usage: record_within.sh OUT_DIR RECORD_SCRIPT BUDGET_S NAME...}
script=${2:?record script}
budget=${3:?budget in seconds}
shift 3
cap=${CAP:-120}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null || true
for name in "$@"; do
    if [ $((SECONDS + cap)) -gt "$budget" ]; then
        echo "[$name] skipped at ${SECONDS} s"
        continue
    fi
    work=$(mktemp -d)
    STEP_TIMEOUT=$cap bash "$script" "$work" "$name" 2>&1 | grep -v '^{' | tail -4
    [ -f "$work/validation.tar" ] && cp "$work/validation.tar" "$out/$name.tar"
    rm -rf "$work"
done
echo "done in ${SECONDS} s"
ls -l "$out"
