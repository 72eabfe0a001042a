#!/usr/bin/env bash
# Record the forty-fifth hold-out set (holdout45_workloads/: the shapes the model still reads
# worst — convolutions beside GEMMs, heads sharing one input, an LSTM beside GEMMs, TF32 beside
# fp32, many small inputs, a foreach update — and an fp32 ResNet and GRU; written after the
# simulated eager run was made to share the device: blind for everything to date) as
# record.sh records the validation workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`, with record.sh's
# environment passed through):
#
#   bash sample_traces/validation/record_holdout45.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout45/.
set -uo pipefail
out=${1:?usage: record_holdout45.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout45_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
