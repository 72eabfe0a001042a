#!/usr/bin/env bash
# Record the forty-seventh hold-out set (holdout47_workloads/: three fork-joins on side
# streams — ColBERT late interaction with a small query and a bigger passage encoder, a
# CrossViT dual-branch transformer with CLS cross-attention fusion, an MVCNN with three views
# through shared weights — an fp32 SIREN, a repetition-penalty top-k sampling loop, RegNetY
# stages, a Nystromformer encoder and a basis-decomposed R-GCN; written after holdout46 was
# recorded on the H200, before any prediction of it) as record.sh records the validation
# workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout47.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout47/.
set -uo pipefail
out=${1:?usage: record_holdout47.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout47_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
