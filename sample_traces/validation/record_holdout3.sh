#!/usr/bin/env bash
# Record the third hold-out set (holdout3_workloads/) as record.sh records the validation
# workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`), after the
# eager model's refit (profiler cost 8 us per operator) and the replay model were frozen:
#
#   bash sample_traces/validation/record_holdout3.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout3/.
set -uo pipefail
out=${1:?usage: record_holdout3.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout3_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
