#!/usr/bin/env bash
# Record the chains probe (chains_probe_workloads/: K dependent kernel chains side by side,
# one per side stream — hand-written GEMM + tanh recurrences for K = 1, 2, 4, 8, cuDNN LSTMs
# for K = 1, 2, 4 and bidirectional ones for K = 1, 2 — to measure how a replay's pace
# scales with the chains beside each other) as record.sh records the validation workloads
# (`traceinspect profile --repeats 5 --iters 50 --profile-steps 5`):
#
#   bash sample_traces/validation/record_chains_probe.sh OUT_DIR [NAME ...]
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/chains_probe/.
set -uo pipefail
out=${1:?usage: record_chains_probe.sh OUT_DIR [NAME ...]}
shift
[ $# -gt 0 ] || set -- workloads
WORKLOAD_DIR=sample_traces/validation/chains_probe_workloads \
    exec bash sample_traces/validation/record.sh "$out" "$@"
