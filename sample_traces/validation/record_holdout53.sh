#!/usr/bin/env bash
# Record the fifty-third hold-out set (holdout53_workloads/: eight steps written after the
# shared bandwidth was refined on holdout52 — a demand saturating at half the SMs, a knee at
# 0.8 of the bandwidth, gathers apart — and frozen before any of them ran on a GPU: six on
# side streams — the foreach SGD updates of a ResNet-50 and a BERT encoder, gradient clipping
# beside a weight EMA, two instant-NGP hash-grid fields, three tabular towers of gathers, a
# two-channel log-mel front end, two MLP-Mixer towers — and two on one stream, Conformer
# convolution modules and RWKV-4's time mixing as a Python loop) as record.sh records the
# validation workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout53.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout53/.
set -uo pipefail
out=${1:?usage: record_holdout53.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout53_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
