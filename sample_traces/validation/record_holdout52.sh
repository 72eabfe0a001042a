#!/usr/bin/env bash
# Record the fifty-second hold-out set (holdout52_workloads/: eight steps written to judge the
# bandwidth that light kernels streaming memory share side by side, schedule.BANDWIDTH_LATENCY_NS,
# frozen before any of them ran on a GPU: six with memory-bound work on two or three side
# streams — a 2-D Fourier Neural Operator at two resolutions, SimCLR's two-view augmentation of
# 64 images, a DLRM's 24 embedding bags in three groups, the AdamW updates of two models,
# two WaveNet stacks, two GroupNorm decoder branches — and two on one stream, a Mamba selective
# scan as a Python loop and a Swin Transformer stage) as record.sh records the validation
# workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout52.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout52/.
set -uo pipefail
out=${1:?usage: record_holdout52.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout52_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
