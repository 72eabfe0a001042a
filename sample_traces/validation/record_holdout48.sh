#!/usr/bin/env bash
# Record the forty-eighth hold-out set (holdout48_workloads/: two fork-joins on side streams —
# a pix2pixHD multi-scale PatchGAN discriminator with one scale per stream, ComplEx
# knowledge-graph filtered ranking with tail and head prediction on two streams — a ViT training
# step with a capturable AdamW, SqueezeNet 1.1 fire modules at batch 64, FSRCNN x3
# super-resolution of one frame, a Funnel-Transformer encoder, a Lennard-Jones velocity-Verlet
# loop and a MeshGraphNets forward pass; written after holdout47 was recorded on the H200, before
# any prediction of it) as record.sh records the validation workloads (`traceinspect profile
# --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout48.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout48/.
set -uo pipefail
out=${1:?usage: record_holdout48.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout48_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
