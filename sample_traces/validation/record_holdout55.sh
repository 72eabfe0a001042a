#!/usr/bin/env bash
# Record the fifty-fifth hold-out set (holdout55_workloads/: eight steps written after holdout54
# judged the reshaped shared bandwidth, to exercise it further, and frozen before any of them
# ran on a GPU: five on side streams — the ten Inception-ResNet-A blocks of Inception-ResNet-v2
# with their three branches in fp32 and cuDNN's inference BatchNorm, OpenCLIP's local
# contrastive loss over a 32768-pair batch in its two directions, a GPT-2-small decode over a
# paged KV cache for two request groups (two-batch overlap), GradScaler's unscale, clipping and
# scale update of GPT-2 small's gradients beside an MLP's autocast forward, the first level of
# a DDPM U-Net on four crop sizes — and three on one stream, a spiking CSNN of LIF neurons over
# 8 time steps, vector-quantize-pytorch's k-means codebook initialization and Deformable DETR's
# encoder on its grid_sample reference path) as record.sh records the validation workloads
# (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout55.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout55/.
set -uo pipefail
out=${1:?usage: record_holdout55.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout55_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
