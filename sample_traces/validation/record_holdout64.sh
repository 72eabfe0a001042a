#!/usr/bin/env bash
# Record the sixty-fourth hold-out set (holdout64_workloads/: eight steps written while the model
# stood as committed at b0f7c22, of families no earlier set holds, and frozen before any of them
# ran on a GPU; chosen to judge blind the kinds of step the model has predicted least well: cuDNN
# RNNs in fp32, optimizer-heavy updates, many small inputs, a host-to-device copy inside the step
# and side streams that carry many short kernels — seven on one stream: the DCASE 2021 Task 4
# baseline CRNN scoring 24 ten-second clips for sound events, the per-clip min-max scaling of 128
# log-mels, 7 convolutions with the baseline's GLU gates and average pools, a cuDNN 2-layer
# bidirectional ``nn.GRU`` of 128 over 156 frames, the strong and attention-pooled weak heads and
# their binary cross-entropies (fp32, TF32 off, eval); a training step of Inan, Khosravi and
# Socher's tied-embedding LSTM language model on 20 x 35 Penn Treebank words, a cuDNN 2-layer
# ``nn.LSTM`` of 650 with the hidden state carried in and out, the tied 10,000-word decoder, the
# cross-entropy and the augmented loss (the KL to the temperature-softened similarity of each
# target's embedding to the vocabulary), backward, the foreach norm clip and ``torch.optim.Adam``
# (foreach, capturable) (fp32, TF32 off); the update alone of a cautious Lion over MLP-Mixer-S/16's
# 102 tensors (18.5 M values), the gradients copied in from a static buffer, the foreach global-
# norm clip, decoupled weight decay on the weights, Lion's foreach lerp and sign, the caution mask
# and its mean per tensor (some 400 small kernels), the update, the momentum and a foreach EMA of
# the weights (fp32, no forward); a multi-task network on 2 NYUD-v2 images of 480 x 640, a shared
# ResNet-18 encoder and four heads at different resolutions, a DeepLab-v3+ segmentation decoder at
# 1/4, a top-down depth decoder to 1/2, a hypercolumn surface-normal head at 1/4 and HED-like edge
# side outputs fused at full resolution, upsampling and concatenating (bf16, eval); parallel
# MaskNet scoring 2048 impressions from 31 small inputs, 16 ``nn.Embedding`` and 4
# ``nn.EmbeddingBag`` fields and 10 numeric ones embedded by ``Linear(1, 16)``, 30 per-field
# LayerNorms, three instance-guided MaskBlocks and the MLP, and the log loss (fp32, TF32 off,
# eval); RMA choosing the joint targets of 64 A1 quadrupeds, six observation tensors (the history
# of 50 state-action pairs among them) copied inside the step from pinned host buffers
# (non_blocking), the adaptation module's MLP and three ``Conv1d`` to the extrinsics and the base
# policy's MLP (fp32); MaxViT-T on 8 ImageNet images, 11 blocks of an MBConv, then 7 x 7 block and
# grid attention with a relative position bias given to ``scaled_dot_product_attention`` as its
# mask (fp16, eval) — and one as program fork / joins with many short kernels on three side
# streams: Lite-HRNet-18 estimating 17 keypoints' heatmaps on 16 person crops of 256 x 192, in
# each of its 8 modules' conditional channel weighting blocks and fuse layers, and its stage
# transitions, each branch's depthwise convolution, spatial weighting, concatenation and channel
# shuffle or fused sum on a side stream of its own, the fourth beside the third, some 27 forks,
# joined by ``wait_stream`` events (fp16, eval)) as record.sh records the validation workloads
# (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout64.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout64/.
set -uo pipefail
out=${1:?usage: record_holdout64.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout64_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
