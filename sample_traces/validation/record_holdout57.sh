#!/usr/bin/env bash
# Record the fifty-seventh hold-out set (holdout57_workloads/: eight steps written while the model
# stood as committed, of families no earlier set holds, and frozen before any of them ran on a
# GPU: five on side streams — Stable Diffusion 3 Medium's MM-DiT, four bf16 joint blocks with
# each block's image stream and text stream on their own streams around the joint attention,
# eight fork / join rounds; Stable Video Diffusion's image conditioning, the fp16 SD VAE encoder
# on a 256 x 448 frame beside the CLIP ViT-H/14 image encoder; DINOv2's ViT-S/14 teacher on the
# global crops with Sinkhorn-Knopp centering beside the student on the global and on the local
# crops, three streams under bf16 autocast, then the DINO losses; Wav2Lip's audio encoder beside
# its face encoder (fp32, cuDNN's TF32 convolutions), then the face decoder; OWL-ViT B/32's image
# tower and box head beside its text tower on 8 queries an image (fp32, TF32 GEMMs), then the
# class head — and three on one stream, DIEN's GRU interest extractor, target attention and
# 32-step AUGRU loop (fp32, TF32 off), Autoformer's FFT Auto-Correlation encoder-decoder on
# ETTh1-sized windows (fp32, TF32 off) and the Vocos vocoder's ConvNeXt backbone under fp16
# autocast with its irfft + fold inverse-STFT head) as record.sh records the validation
# workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout57.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout57/.
set -uo pipefail
out=${1:?usage: record_holdout57.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout57_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
