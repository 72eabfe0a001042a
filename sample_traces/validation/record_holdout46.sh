#!/usr/bin/env bash
# Record the forty-sixth hold-out set (holdout46_workloads/: cuDNN RNNs on the current stream
# and on side streams — a BiLSTM tagger, a BiGRU beside an MLP, twin LSTM encoders, a 3-layer
# LSTM LM — three hand-written relu recurrences on three streams, a GRU-cell greedy decode,
# a transformer decoder layer and ResNet bottlenecks; written after holdout45 was recorded on
# the H200, before any prediction of it) as record.sh records the validation workloads
# (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout46.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout46/.
set -uo pipefail
out=${1:?usage: record_holdout46.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout46_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
