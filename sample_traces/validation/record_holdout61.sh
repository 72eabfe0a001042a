#!/usr/bin/env bash
# Record the sixty-first hold-out set (holdout61_workloads/: eight steps written while the model
# stood as committed at 9b0b9a6, of families no earlier set holds, and frozen before any of them
# ran on a GPU — four on one stream: Glow's multi-scale flow, 3 levels of 8 steps of ActNorm, the
# LU-decomposed invertible 1 x 1 convolution and affine coupling (512 channels), scoring CIFAR-10
# images in bits per dimension, some 1,050 kernels (fp32, TF32 on); a MuZero learner step on 9 x 9
# Go, the representation network, 5 dynamics unrolls with their prediction heads, the categorical
# value, reward and policy losses, backward and foreach SGD with momentum, some 1,000 to 1,400
# kernels (bf16 autocast); FiBiNET's SENET layer and field-interaction bilinear layer over 39
# Criteo fields for 4096 impressions, then its DNN, some 30 kernels (fp16); End-To-End Memory
# Networks as a Penn Treebank language model, 6 hops over 100 words of memory, some 50 kernels
# (fp32, TF32 off) — and four as program fork / joins of two or three side streams: DANet's
# position attention module beside its channel attention module on dilated ResNet-101 features,
# then the classifier, upsampling and argmax (bf16); MIONet's two branch nets (the source term and
# the initial condition) and its trunk net over a 128 x 128 grid on three side streams, then the
# product, the output GEMM and the relative L2 error (fp32, TF32 on); an Attentive Neural
# Process's deterministic path (self- and cross-attention) beside its latent path (prior and
# posterior), then the decoder and the negative ELBO for CelebA image completion (fp16); a
# Relation Network's image CNN beside its question LSTM, then g over the 4096 pairs of cells and f
# to the CLEVR answers (bf16)) as record.sh records the validation workloads (`traceinspect
# profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout61.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout61/.
set -uo pipefail
out=${1:?usage: record_holdout61.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout61_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
