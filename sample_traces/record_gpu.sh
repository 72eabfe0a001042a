#!/bin/bash
# Re-record every sample on a GPU machine (from the project root):
#   bash sample_traces/record_gpu.sh OUTDIR
# writes OUTDIR/{<w>.<mode>.json.gz, latencies.json, nvidia-h200.json, nsys/*.sqlite.gz}.
# Needs python3 with torch (CUDA), and nsys + QdstrmImporter on PATH for the nsys part.
# SMOKE=1 runs the record part with tiny sizes (no GPU needed; calibrate and nsys then fail).
set -u
out=${1:?usage: record_gpu.sh OUTDIR}
mkdir -p "$out/nsys"
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
smoke=${SMOKE:+--smoke}
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
log() { echo "[$(date -u +%T)] $*"; }

log "record"
timeout 300 "$PY" "$here/record.py" --out "$out" $smoke || log "record exited $?"

log "calibrate"
(cd "$root" && timeout 120 "$PY" -m traceinspect.collect.calibrate --out "$out/nvidia-h200.json") \
  || log "calibrate exited $?"

# Nsight Systems: NVTX ranges only (no torch.profiler), 5 steps after a warm-up.
pids=()
nsys_one() {  # workload variant graph-trace(node|graph|"") tag
  local w=$1 v=$2 trace=$3 tag=$4
  local rep=/tmp/nsys_${w}_${v}${tag:+_$tag}
  local name="$w.$v${tag:+.$tag}.sqlite.gz"
  log "nsys $name"
  rm -f "$rep".*
  timeout 100 nsys profile -t cuda,nvtx --sample=none --cpuctxsw=none \
    ${trace:+--cuda-graph-trace=$trace} -o "$rep" \
    "$PY" "$here/record.py" --mode nsys --workload "$w" --variant "$v" --steps 5 $smoke \
    || log "nsys profile $name exited $?"
  (  # import + export overlap the next profile (CPU only)
    [ -f "$rep.nsys-rep" ] || timeout 100 QdstrmImporter -i "$rep.qdstrm" >/dev/null
    timeout 100 nsys export --type sqlite -o "$rep.sqlite" "$rep.nsys-rep" >/dev/null \
      && gzip -9 -c "$rep.sqlite" > "$out/nsys/$name" && log "wrote nsys/$name" \
      || log "export of $name failed"
  ) &
  pids+=($!)
}
nsys_one tiny_mlp eager "" ""
nsys_one tiny_mlp graphed node node
nsys_one tiny_mlp graphed graph graph
nsys_one mixed eager "" ""
nsys_one big_gemm eager "" ""
nsys_one mixed graphed node node
nsys_one decode_step graphed node node
nsys_one two_streams eager "" ""
nsys_one host_sync eager "" ""
for p in "${pids[@]}"; do wait "$p"; done
log "done"
