#!/usr/bin/env bash
# Record the forty-third hold-out set (holdout43_workloads/) as record.sh records the validation
# workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`, with record.sh's
# environment passed through):
#
#   bash sample_traces/validation/record_holdout43.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout43/.
set -uo pipefail
out=${1:?usage: record_holdout43.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout43_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
