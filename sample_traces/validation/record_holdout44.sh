#!/usr/bin/env bash
# Record the forty-fourth hold-out set (holdout44_workloads/: fp32 GEMMs and convolutions side
# by side, written after long FP32 GEMMs were made to slow each other fully: blind for it) as
# record.sh records the validation workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`, with record.sh's
# environment passed through):
#
#   bash sample_traces/validation/record_holdout44.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout44/.
set -uo pipefail
out=${1:?usage: record_holdout44.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout44_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
