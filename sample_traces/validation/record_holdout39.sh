#!/usr/bin/env bash
# Record the thirty-ninth hold-out set (holdout39_workloads/) as record.sh records the validation
# workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`, with record.sh's
# environment passed through):
#
#   bash sample_traces/validation/record_holdout39.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout39/.
set -uo pipefail
out=${1:?usage: record_holdout39.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout39_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
