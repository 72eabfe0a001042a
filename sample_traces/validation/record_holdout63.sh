#!/usr/bin/env bash
# Record the sixty-third hold-out set (holdout63_workloads/: eight steps written while the model
# stood as committed at 14c44b1, of families no earlier set holds, and frozen before any of them
# ran on a GPU; chosen to judge blind the kinds of step the model reads least well: side streams
# that carry many short kernels, optimizer-heavy training steps, a host-to-device copy inside the
# step — five on one stream: a FixMatch training step on CIFAR-10, a WRN-28-2 over 8 labelled and
# 2 x 56 unlabelled images, the supervised and masked pseudo-label losses, backward, SGD with
# Nesterov momentum (foreach) and the EMA model's foreach lerp of 80 parameters and copy of 75
# buffers (bf16 autocast); a Barlow Twins training step, a CIFAR ResNet-18 and a 2048-2048-2048
# projector over two views of 32 images, the cross-correlation loss, backward, ``GradScaler``'s
# unscale, LARS's trust ratios in foreach ops and its momentum as a fused SGD that skips on an
# overflow, and the scale update (fp16 autocast); DS-CNN-L spotting keywords in 1024 one-second
# clips, their MFCCs and labels copied inside the step from pinned host buffers (non_blocking)
# ahead of a 10 x 4 convolution and 5 depthwise-separable layers of 276 channels (fp16);
# Wav2Letter's 11 1-D convolutions over 8 utterances of 400 MFCC frames, the log-softmax and the
# greedy argmax (fp32, TF32 off); PoolFormer-S12's 12 pooling blocks on 32 ImageNet images (bf16) —
# and three as program fork / joins with many short kernels on their side streams: MobileOne-S1 in
# its training-time form, each of its 43 blocks' conv-BN, 1 x 1 scale conv-BN and BatchNorm skip
# branches on up to three side streams (fp16); NASNet-A Mobile, each of its 16 cells' separable
# convolution and pooling branches split over two side streams, 20 to 30 kernels a side a fork
# (bf16, channels-last); PLE's two CGC extraction levels over 2048 impressions, each task's experts
# and gate and the shared experts on three side streams, then the two task towers on two, and the
# log losses (fp32, TF32 off)) as record.sh records the validation workloads (`traceinspect profile
# --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout63.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout63/.
set -uo pipefail
out=${1:?usage: record_holdout63.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout63_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
