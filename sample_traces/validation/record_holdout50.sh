#!/usr/bin/env bash
# Record the fiftieth hold-out set (holdout50_workloads/: six fork-joins on side streams — a
# BiSeNet V1 with its spatial path and ResNet-18 context path on two streams, an FCOS head with
# its classification and regression towers on two, a DARTS search cell with its separable,
# dilated and light candidate operations on three, a DreamerV2-style agent with its frame
# encoder beside a 15-step RSSM imagination on two, a YouTube-style two-tower retrieval loss
# with its embedding-bag user tower and video tower on two, a multi-stream AGCN with its joint,
# bone and motion networks on three — a Value Iteration Network planning loop at batch 8 and a
# CycleGAN ResNet generator at batch 8; written after holdout49 was recorded, before any
# prediction of it) as record.sh records the validation workloads (`traceinspect profile
# --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_holdout50.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/holdout50/.
set -uo pipefail
out=${1:?usage: record_holdout50.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/holdout50_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
