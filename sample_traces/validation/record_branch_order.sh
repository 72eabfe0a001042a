#!/usr/bin/env bash
# Record the branch-order probes (branch_order_workloads/: holdout32's convolution and GEMM
# branches forked in either order, and with one-block leads) as record.sh records the
# validation workloads (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_branch_order.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/branch_order/. In
# each graphed trace, when each side stream's first kernel starts in a replay tells whether
# a graph's executor holds a branch behind the kernels captured before it
# (docs/validation.md, "When a graph's second branch starts").
set -uo pipefail
out=${1:?usage: record_branch_order.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/branch_order_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
