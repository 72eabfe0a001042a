#!/usr/bin/env bash
# Record the sixty-sixth hold-out set (holdout66_workloads/: eight steps written while the model
# stood as committed at edf1a7f, of families no earlier set holds, and frozen before any of them
# ran on a GPU; like holdout65 a broad, general-purpose blind check across everyday families —
# seven on one stream: one greedy decode step of a Mixtral-style sparse mixture-of-experts decoder
# for 8 sequences each at its own position in a 1,024-slot static cache, 4 layers of 1024, GQA of 8
# query and 2 key-value heads of 128, the router's top-2 of 8 SwiGLU experts (ffn 3584) scattered
# to a dense (tokens, experts) weight matrix and every expert run over all tokens, the 32,000-word
# head's argmax (bf16); RetinaNet's head stage on two 800 x 1216 COCO images, the classification
# and box subnets of four 3 x 3 convolutions shared over P3-P7, the sigmoid, each level's top 1,000
# candidates, the gather of their deltas and anchors, BoxCoder's decoding and the clipping, no NMS
# (fp16, channels-last); NAFNet of width 32 denoising four 256 x 256 SIDD crops, 10 NAFBlocks of
# LayerNorm2d written out, SimpleGate and simplified channel attention, stride-2 down-convolutions
# and PixelShuffle up (fp16, channels-last); one reverse step of the DiffWave LJSpeech vocoder over
# 4 clips of 15,872 samples, 30 residual layers of 64 channels dilated 1-512, the diffusion-step
# embedding, the mel upsampler of two transposed convolutions, the gated tanh-sigmoid units and the
# DDPM update (fp16); the Temporal Fusion Transformer forecasting 24 steps from 168 for 64
# Electricity series, variable selection networks of gated residual networks over 8 past and 7
# future inputs and 2 static ones, cuDNN LSTM encoder and decoder, interpretable 4-head attention,
# 3 quantiles and the quantile loss (fp32, TF32 off); two xLSTM mLSTM blocks of 512 run in their
# recurrent form for 32 steps, 4 heads' matrix memories with exponential input and sigmoid forget
# gates and the stabilizer, the states carried in and out, some 1,700 small kernels (bf16
# autocast); a word2vec skip-gram training step with negative sampling on a text8-sized vocabulary
# of 71,290 x 300, 4,096 pairs and 5 negatives each, dense embedding gradients and foreach SGD, the
# parameters restored from a snapshot each step (fp32) — and one as a program fork / join on two
# side streams: BYOL's loss on 128 CIFAR view pairs, the online ResNet-18 with its projector and
# predictor on side stream 1 beside the target ResNet-18 with its projector on side stream 2, both
# over the 256 images, joined by ``wait_stream``, the symmetric normalized-MSE loss (fp16,
# channels-last)) as record.sh records the validation workloads (`traceinspect profile --repeats 5
# --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout66.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout66/.
set -uo pipefail
out=${1:?usage: record_holdout66.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout66_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
