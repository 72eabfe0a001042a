#!/usr/bin/env bash
# Record the fifty-eighth hold-out set (holdout58_workloads/: eight steps written while the model
# stood as committed, of families no earlier set holds, and frozen before any of them ran on a
# GPU: five on side streams — OpenFlamingo-9B's CLIP ViT-L/14 and Perceiver Resampler beside the
# first three MPT-7B decoder layers (bf16), then the gated cross-attention block and the fourth
# layer; YOLACT's protonet beside its prediction head shared by the five FPN levels of a
# ResNet-50 at 550 x 550 (fp32, cuDNN's TF32 convolutions), then Fast NMS and the mask assembly
# per image; FinalMLP's two feature-gated MLP streams on 10000 Criteo-style impressions in full
# fp32 (TF32 off), then the bilinear interaction aggregation; AV-HuBERT Base's lip-video ResNet-18
# front end beside its audio projection (fp16), then the fusion and the 12-layer encoder; PNA on
# 128 ZINC molecules, each layer's mean, min, max and std aggregators on their own streams (fp32,
# TF32 on), four fork / join rounds of four — and three on one stream, DCRNN's 24-step DCGRU
# seq2seq over METR-LA's 207 sensors with dense diffusion supports (fp32, TF32 off), Real-ESRGAN
# x4plus's RRDBNet upscaling a 96 x 96 image (fp16) and the first 4 layers of a 3B-sized DIFF
# Transformer prefilling 2 x 1024 tokens with four flash attentions a layer under bf16 autocast)
# as record.sh records the validation workloads (`traceinspect profile --repeats 5 --iters 50
# --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout58.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout58/.
set -uo pipefail
out=${1:?usage: record_holdout58.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout58_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
