#!/usr/bin/env bash
# Record the sixty-fifth hold-out set (holdout65_workloads/: eight steps written while the model
# stood as committed at 961290d, of families no earlier set holds, and frozen before any of them
# ran on a GPU; a broad, general-purpose blind check across everyday families rather than the hard
# cases alone, of varied dtypes and batches — seven on one stream: one greedy decode step of a
# Mistral-style decoder for 32 sequences each at its own position, 6 layers of 1024 in Mistral 7B's
# proportions, grouped-query attention of 8 query and 2 key-value heads of 128, complex rotary
# factors, the new keys and values written into 2,048-slot rolling-buffer caches at each
# sequence's slot (``index_put_``), ``repeat_kv`` of the whole caches, the sliding-window mask
# from a slot-position table, ``matmul`` attention with an fp32 softmax, SwiGLU MLPs and the
# 32,000-word head's argmax (bf16); ALBERT-base-v2 classifying 64 SST-2 sentences padded to 128
# tokens, the factorized 128-wide embedding projected to 768 and one shared layer's weights run 12
# times, separate query, key and value projections, ``scaled_dot_product_attention`` with the
# key-padding mask, the tanh GELU MLP, the pooler, the classifier, the cross-entropy and the
# accuracy (fp16); GhostNet 1.0x classifying one ImageNet image at 224 x 224, 16 ghost
# bottlenecks of a 1 x 1 convolution and a cheap depthwise 3 x 3 each, concatenated and sliced,
# squeeze-and-excitation with a hard sigmoid in 7 of them, 5 depthwise-separable shortcuts, the
# BatchNorms unfolded, some 300 kernels of a few microseconds (fp16, channels-last); a training
# step of a plain tabular MLP on 1024 Covertype rows of 54 features, 6 blocks of
# ``Linear(1024, 1024)``, LayerNorm and GELU, the label-smoothed cross-entropy, backward and
# ``AdamW`` (fused, capturable) over 28 tensors, the parameters and state restored from a snapshot
# each step (bf16 autocast); the SRU language model scoring a Penn Treebank chunk of 32 words on 32
# streams, 2 layers of 910 with the cell state carried in and out, each layer's one GEMM for all
# steps then 32 steps of 4 elementwise kernels (``addcmul`` of both gates, a sigmoid and two
# ``lerp``s), the tied 10,000-word output and the cross-entropy (fp16); two GShard mixture-of-
# experts sublayers over 4096 tokens, fairseq's top-2 gating in fp32 (the one-hots, the
# ``cumsum`` places, the capacity 2 S / E = 512, the renormalized gates, the (4096, 16, 512)
# combine weights by ``bmm`` outer products and the auxiliary loss), the dispatch and combine as
# one-hot ``mm``s and the 16 ReLU experts of 768-3072 run one after another (bf16); APPNP
# classifying the 13,752 products of the Amazon Computers graph in one full-graph pass, the GCN
# normalization with self-loops by ``index_add_``, the MLP 767-64-10 and 10 personalized-PageRank
# steps of ``index_select``, edge weighting, ``index_add_`` and the teleport to the predictions,
# the masked validation loss and accuracy (fp32, TF32 off) — and one as a program fork / join on
# two side streams: a Poly-encoder scoring 32 ConvAI2 contexts against the batch's 32 responses,
# a BERT-base context tower over (32, 128) tokens and its 64 codes' attention on side stream 1
# beside a BERT-base candidate tower over (32, 32) tokens and its [CLS] states on side stream 2,
# joined by ``wait_stream``, then each candidate's attention over the codes, the (32, 32) scores,
# the in-batch cross-entropy and the accuracy (fp16)) as record.sh records the validation
# workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout65.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout65/.
set -uo pipefail
out=${1:?usage: record_holdout65.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout65_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
