#!/usr/bin/env bash
# Record the fifty-first hold-out set (holdout51_workloads/: eight steps, six of families the
# set lacked and two new shapes of families it has (Hyena's FFT convolutions, on one stream in
# holdout13; draft and target decoding, at batch 1 in holdout28) — an FP8 MLP of 4 blocks 2048-8192-2048 at 64
# tokens through torch._scaled_mm with activations quantized on the fly, a batched exact
# Gaussian-process posterior in fp32 (32 GPs, cuSOLVER Cholesky and triangular solves), a PPO
# update at batch 2048 with Normal and Categorical heads, clipped gradients and a capturable
# Adam, pipelined speculative decoding at batch 4 with a 2-layer draft model's four greedy
# tokens and a 6-layer target model's verification on two streams, a Mixture-of-Depths
# transformer (6 layers, every other routing the top 12.5 % of 8 x 512 tokens), two Hyena
# long-convolution branches (FFT convolutions over 8,192 positions) on two streams, a PointNet++
# classifier with farthest-point sampling and 32-nearest-neighbour grouping over 8 x 4,096
# points, and 60 log-domain Sinkhorn iterations between 16 pairs of 512-point clouds —
# written after holdout50 was recorded, before any prediction of it) as record.sh records the
# validation workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout51.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout51/.
set -uo pipefail
out=${1:?usage: record_holdout51.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout51_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
