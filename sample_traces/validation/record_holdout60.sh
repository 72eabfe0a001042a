#!/usr/bin/env bash
# Record the sixtieth hold-out set (holdout60_workloads/: eight steps written while the model
# stood as committed at 87aaedb, of families no earlier set holds, and frozen before any of them ran on a
# GPU, each built around cuDNN's multi-layer RNNs (an ``nn.LSTM`` or ``nn.GRU`` of 2 to 4 layers,
# whose layers and directions cuDNN runs on streams of its own) as real models use them — four on
# one stream: Deep Speech 2's two convolutions and 3-layer bidirectional GRU over 64 frames
# (fp16); the GNMT encoder at batch 1, a bidirectional LSTM then a 3-layer LSTM of 1024 with a
# residual add and the attention keys (bf16); AWD-LSTM's character-level PTB model, a 2-layer
# LSTM of 1000 and a 1-layer one of 200 over 96 characters, the tied decoder and the loss (fp32,
# TF32 on); TPA-LSTM's 4-layer LSTM over 96 hours of 321 series and its temporal pattern attention
# (fp32, TF32 off) — and four as program fork / joins of two side streams: GRU4Rec's 2-layer GRU
# session tower beside an item-tower MLP, then the scores and top-k (fp16); MetricGAN+'s 2-layer
# BiLSTM mask generator beside its spectrally normalised metric discriminator on the reference
# pairs, after the STFTs, then the discriminator on the estimate and the losses (fp16); Listen,
# Attend and Spell's 2-layer BiLSTM listener beside its speller's 2-layer LSTM over a character
# prefix, then the attention and the character distribution (bf16 autocast, the LSTMs in bf16);
# ESIM's shared 2-layer BiLSTM encoder on the premises and the hypotheses, the soft alignment,
# then its composition BiLSTM on both sides again (fp16)) as record.sh records the validation
# workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout60.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout60/.
set -uo pipefail
out=${1:?usage: record_holdout60.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout60_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
