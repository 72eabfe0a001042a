#!/usr/bin/env bash
# Record the fifty-sixth hold-out set (holdout56_workloads/: eight steps written while the model
# stood as committed, of families no earlier set holds, and frozen before any of them ran on a
# GPU: five on side streams — a bf16 ViT-B/16 backbone beside its fp32 Ladder Side-Tuning side
# network one block behind, twelve fork / join rounds; an MMoE CTR + CVR ranker's four expert
# MLPs in full fp32 (TF32 off), one a stream; a heterogeneous GraphSAGE on a MovieLens-1M-sized
# graph, each relation's index_select + scatter_add_ mean aggregation on its own stream (fp32,
# TF32 on); SDXL's two fp16 text encoders, CLIP-L beside OpenCLIP bigG; HiFi-GAN's multi-period
# discriminator beside its multi-scale one with the generator's losses, under fp16 autocast —
# and three on one stream, Segment Anything's prompt encoder and mask decoder for 8 boxes with
# the masks upscaled (fp32), a foreach Adan update of a ViT-S/16's parameters and SASRec's full
# ranking of a 100000-item catalogue with top-k, under bf16 autocast) as record.sh records the
# validation workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout56.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout56/.
set -uo pipefail
out=${1:?usage: record_holdout56.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout56_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
