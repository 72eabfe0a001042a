#!/usr/bin/env bash
# Record the concurrency fit set: the scripts in streams_workloads/ (side streams forked with
# wait_stream and joined back) and the multi-stream workloads of the earlier sets, timed in a
# fresh process, as record.sh records the validation workloads:
#
#   bash sample_traces/validation/record_streams.sh OUT_DIR
#
# Leaves OUT_DIR/validation.tar; unpack it into sample_traces/validation/streams_fit/.
set -uo pipefail
out=${1:?usage: record_streams.sh OUT_DIR}
here=sample_traces/validation
WORKLOAD_DIR=$here/streams_workloads bash $here/record.sh "$out" workloads
WORKLOAD_DIR=$here/workloads bash $here/record.sh "$out" multistream_events
WORKLOAD_DIR=$here/holdout2_workloads bash $here/record.sh "$out" fork_join_streams
WORKLOAD_DIR=$here/holdout3_workloads bash $here/record.sh "$out" streams_pipeline
WORKLOAD_DIR=$here/holdout5_workloads exec bash $here/record.sh "$out" dual_tower_streams_b4
