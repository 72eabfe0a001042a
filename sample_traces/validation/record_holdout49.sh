#!/usr/bin/env bash
# Record the forty-ninth hold-out set (holdout49_workloads/: four fork-joins on side streams —
# a PSPNet head with its pyramid pooling on two streams and the auxiliary head on a third, a
# Hybrid-Demucs-style encoder with its waveform and spectrogram branches on two, a joint
# CTC/attention loss with the CTC forward recursion as a loop beside the attention decoder, a
# LightGCN recommender with its graph propagation, item content tower and user tower on three —
# a physics-informed network's training step for the Burgers equation with Adam, a Neural Turing
# Machine loop at batch 4, a D2Q9 lattice-Boltzmann loop in fp32 and XCiT-S12 at batch 64;
# written after holdout48 was recorded on the H200, before any prediction of it) as record.sh
# records the validation workloads (`traceinspect profile --repeats 5 --iters 50
# --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout49.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout49/.
set -uo pipefail
out=${1:?usage: record_holdout49.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout49_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
