#!/bin/bash
# How much Nsight Systems slows an eager step, against the same step unprofiled, in one
# lease on the H200 (nsys and QdstrmImporter on PATH; torch with CUDA):
#   bash sample_traces/nsys/eager_inflation.sh OUTDIR [WORKLOAD...]
# For each workload of sample_traces/workloads.py (default: the five with nsys samples, and
# decode_step and convnet_b1): sample_traces/record.py --mode nsys with 30 warm-up steps and
# 20 NVTX `step` ranges, each synchronized and timed by the script itself, run three times —
# unprofiled, under `nsys profile -t cuda,nvtx --sample=none --cpuctxsw=none`, unprofiled
# again (the drift between the two unprofiled runs bounds the comparison). Writes
# OUTDIR/inflation.jsonl (one line per run, `nsys` true under nsys) and
# OUTDIR/<w>.eager.w30.sqlite.gz (the nsys run's export).
set -u
out=${1:?usage: eager_inflation.sh OUTDIR [WORKLOAD...]}
shift
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(tiny_mlp mixed host_sync two_streams big_gemm decode_step convnet_b1)
run=("$PY" "$here/record.py" --mode nsys --variant eager --steps 20 --nsys-warmup 30)
log() { echo "[$(date -u +%T)] $*" >&2; }
for w in "${workloads[@]}"; do
  log "$w unprofiled"
  timeout 90 "${run[@]}" --workload "$w" | grep '^{' >>"$out/inflation.jsonl"
  log "$w under nsys"
  rep=/tmp/inflation_$w
  rm -f "$rep".*
  timeout 120 nsys profile -t cuda,nvtx --sample=none --cpuctxsw=none -o "$rep" \
    "${run[@]}" --workload "$w" 2>/dev/null | grep '^{' >>"$out/inflation.jsonl"
  [ -f "$rep.nsys-rep" ] || timeout 60 QdstrmImporter -i "$rep.qdstrm" >/dev/null
  timeout 60 nsys export --type sqlite -o "$rep.sqlite" "$rep.nsys-rep" >/dev/null \
    && gzip -9 -c "$rep.sqlite" >"$out/$w.eager.w30.sqlite.gz" || log "export of $w failed"
  log "$w unprofiled again"
  timeout 90 "${run[@]}" --workload "$w" | grep '^{' >>"$out/inflation.jsonl"
done
ls -l "$out"
