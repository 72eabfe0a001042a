#!/usr/bin/env bash
# Record the fifty-ninth hold-out set (holdout59_workloads/: five steps written while the model
# stood as committed, of families no earlier set holds, and frozen before any of them ran on a
# GPU, each a program fork / join of two side streams with cuDNN work that forks onto cuDNN's own
# streams on at least one side — three with cuDNN's grouped 1-D convolutions of 41 taps: MelGAN's
# generator on the mel beside its three-scale discriminator on the real audio (groups 4 to 256),
# then the discriminator on the generated audio and the hinge and feature-matching losses (fp16);
# VITS's 16-layer posterior encoder and 4-coupling flow beside the scale sub-discriminator on real
# and generated segments (groups 4 to 256), then the KL term (fp16); Multi-band MelGAN's generator
# and PQMF synthesis, then its three-scale discriminator (groups 4 to 64) beside the full- and
# sub-band multi-resolution STFT losses (fp16 nets, fp32 losses) — and two with cuDNN LSTMs: the
# EnCodec 24 kHz SEANet encoder with its 2-layer LSTM beside the multi-scale STFT discriminator
# (fp16 autocast), then the 8-codebook residual quantizer; SV2TTS's Tacotron 2 text encoder
# (convolutions and a bidirectional LSTM, fp16) beside the GE2E speaker encoder's 3-layer LSTM over
# 24 partials of 160 frames (fp32), then the concatenated memory and its projection) as record.sh
# records the validation workloads (`traceinspect profile --repeats 5 --iters 50
# --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout59.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout59/.
set -uo pipefail
out=${1:?usage: record_holdout59.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout59_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
