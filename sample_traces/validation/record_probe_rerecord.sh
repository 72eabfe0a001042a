#!/usr/bin/env bash
# Record again, with `traceinspect profile`'s copy host-cost probe (results.json host_costs),
# the earlier hold-out workloads that the model missed by more than 10 % before the probe,
# each from its own set's folder, as record.sh records them:
#
#   bash sample_traces/validation/record_probe_rerecord.sh OUT_DIR [SET/NAME ...]
#
# Default: every one below. Leaves OUT_DIR/pack/<name>/; unpack it into
# sample_traces/validation/probe_rerecord/ (a second machine's into probe_rerecord_rerun/).
set -uo pipefail
out=${1:?usage: record_probe_rerecord.sh OUT_DIR [SET/NAME ...]}
shift
[ $# -gt 0 ] || set -- \
    holdout15/dcn_v2_streams_b1024 holdout15/siamese_streams_b32 \
    holdout16/feature_fusion_6in_b32 holdout16/wide_deep_4in_streams_b256 \
    holdout3/streams_pipeline holdout4/rmsprop_loop holdout5/lm_head_topk_b8 \
    holdout8/dequant_prefetch_b16 holdout9/input_heavy_b32 \
    holdout10/expert_choice_moe_b16 holdout10/recsys_embed_mlp_b512 \
    holdout13/gumbel_softmax_vae_b256 holdout14/inception_streams_b16
for item in "$@"; do
    WORKLOAD_DIR=sample_traces/validation/${item%%/*}_workloads \
        bash sample_traces/validation/record.sh "$out" "${item#*/}"
done
