#!/usr/bin/env bash
# Record the second hold-out set (holdout2_workloads/) exactly as record.sh records the
# validation workloads: `traceinspect profile --repeats 5 --iters 50 --profile-steps 5`.
# Recorded only after the replay model was frozen (occupancy-aware device share, exact
# stream waits); from the project root on the GPU machine:
#
#   bash sample_traces/validation/record_holdout2.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/pack/<name>/ and OUT_DIR/validation.tar; unpack it into
# sample_traces/validation/holdout2/. SMOKE=1 checks it on a CPU.
set -uo pipefail
out=${1:?usage: record_holdout2.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout2_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
