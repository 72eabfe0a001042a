#!/usr/bin/env bash
# Record the fifty-fourth hold-out set (holdout54_workloads/: eight steps written after
# holdout53 judged the refined shared bandwidth, to exercise it further, and frozen before any
# of them ran on a GPU: six on side streams — a ViT-B/16's foreach Adam beside a ResNet-50's
# foreach Lion, two VGG-BN stems of a two-stream (RGB + flow) net in training-mode BatchNorm,
# three MobileNetV2 towers of fp32 depthwise convolutions, a light FPN decoder's upsampling
# twice for flip TTA, four large bf16 GEMMs beside a long copy / add / LayerNorm / cast
# epilogue, four dense loss heads (CenterNet focal, cross-entropy, smooth-L1, Panoptic-DeepLab)
# — and two on one stream, a ViT-B/16 with Token Merging and a Growing Neural Cellular
# Automaton rolled out as a Python loop) as record.sh records the validation workloads
# (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout54.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout54/.
set -uo pipefail
out=${1:?usage: record_holdout54.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout54_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
