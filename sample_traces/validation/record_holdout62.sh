#!/usr/bin/env bash
# Record the sixty-second hold-out set (holdout62_workloads/: eight steps written while the model
# stood as committed at 93518b3, of families no earlier set holds, and frozen before any of them
# ran on a GPU; five built around cuDNN's multi-layer RNNs (an ``nn.LSTM`` or ``nn.GRU`` of 2 to 4
# layers, whose layers and directions cuDNN runs on streams of its own), to judge blind the
# model's reading of their layer-to-layer hand-overs — four on one stream: the CRN of Tan and Wang
# for real-time speech enhancement, five causal convolutions, a 2-layer LSTM of 1024 over 100
# frames and five transposed convolutions with skips (fp16); Magenta's Performance RNN evaluating
# 64-event segments, one-hot events through a 3-layer LSTM of 512, the loss, accuracy and
# perplexity (fp32, TF32 off); the PyTorch chatbot tutorial's Cornell Movie-Dialogs model, a
# bidirectional 2-layer GRU encoder of 500 and a 2-layer GRU decoder with Luong dot attention
# over 32 + 32 tokens, teacher-forced, and the masked NLL (bf16); FocalNet-T (srf) classifying
# ImageNet images, 12 focal modulation blocks, some 400 kernels (bf16) — and four as program fork
# / joins of two side streams: ELMo's character CNN and highways, then its forward 2-layer LSTM
# language model beside its backward one and the scalar mix (fp16); WDR, DiDi's Wide-Deep-
# Recurrent travel-time estimator, the wide and deep models beside a 4-layer LSTM of 128 over 64
# road links, then the regressor and the MAPE (fp32, TF32 on); SKNet-50, each of its 16 selective
# kernel units' 3 x 3 path beside its dilated 3 x 3 path, then the fuse and select (fp16); PANNs'
# Wavegram-Logmel-CNN14, the learned Wavegram beside the conv-STFT log-mel front end, then the
# CNN14 trunk over 5 s clips (bf16 autocast, the log-mel in fp32)) as record.sh records the
# validation workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout62.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout62/.
set -uo pipefail
out=${1:?usage: record_holdout62.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout62_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
