#!/usr/bin/env bash
# On an H100: measure the machine with `traceinspect calibrate`, then record a hold-out set's
# workloads (default: holdout18_workloads/, written and recorded on the H200 first) as
# record.sh records them. Nothing of the H100 is fitted: the model is the H200's, frozen,
# with only `calibrate`'s measurements of this machine in place of the H200's.
#
#   bash sample_traces/validation/record_h100.sh OUT_DIR [NAME ...]
#
# Environment: WORKLOAD_DIR (default sample_traces/validation/holdout18_workloads), QUICK=1
# (calibrate --quick), plus record.sh's. Leaves OUT_DIR/pack/calibration.json beside the
# workloads' recordings and OUT_DIR/validation.tar.
set -uo pipefail
out=${1:?usage: record_h100.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
py=${PYTHON:-python3}
mkdir -p "$out/pack"
quick=()
[ -n "${QUICK:-}" ] && quick=(--quick)
t0=$SECONDS
"$py" -m traceinspect calibrate --out "$out/pack/calibration.json" --force "${quick[@]}" \
    >"$out/calibrate.log" 2>&1
echo "[calibrate] rc=$? $((SECONDS - t0)) s"
WORKLOAD_DIR=${WORKLOAD_DIR:-sample_traces/validation/holdout18_workloads} \
    exec bash sample_traces/validation/record.sh "$out" "$@"
