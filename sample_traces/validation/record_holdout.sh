#!/usr/bin/env bash
# Record the hold-out workloads (holdout_workloads/) exactly as record.sh records the
# validation workloads: `traceinspect profile --repeats 5 --iters 50 --profile-steps 5`.
# Run only after the estimator is frozen; from the project root on the GPU machine:
#
#   bash sample_traces/validation/record_holdout.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/pack/<name>/ (results.json, eager/graphed candidate traces, profile.log.gz),
# OUT_DIR/pack/environment.json and OUT_DIR/validation.tar (about 1.5 MB); unpack it into
# sample_traces/validation/holdout/. Environment as for record.sh (SMOKE=1 checks it on a CPU).
set -uo pipefail
out=${1:?usage: record_holdout.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
