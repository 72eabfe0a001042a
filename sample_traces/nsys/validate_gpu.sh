#!/bin/bash
# H200 validation of the Nsight Systems collector, on a machine with 2 GPUs, from the project
# root (nsys, QdstrmImporter and torchrun on PATH; traceinspect importable):
#   bash sample_traces/nsys/validate_gpu.sh OUTDIR          # record, then summarize
#   bash sample_traces/nsys/validate_gpu.sh OUTDIR summary  # summarize what was recorded
# 1. region() cost per enter/exit, plain and under nsys recording NVTX;
# 2. examples/tiny_mlp.py three ways: `traceinspect profile --nsys`, `nsys profile python` by
#    hand, and `traceinspect profile` (torch.profiler);
# 3. sample_traces/nsys/ddp_step.py on 2 GPUs: unprofiled, under `nsys profile torchrun`
#    (-> ddp.sqlite.gz, trimmed) and under torch.profiler (one Kineto trace per rank);
# 4. summary.json: every region's verdict, kernels and estimate per recording.
set -u
out=${1:?usage: validate_gpu.sh OUTDIR [summary]}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
T=/tmp/ti-validate
NSYS=(nsys profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --cuda-graph-trace=node
      --force-overwrite=true)
log() { echo "[$(date -u +%T)] $*"; }
report() {  # STEM: make STEM.nsys-rep from STEM.qdstrm where needed, export STEM.sqlite
  [ -f "$1.nsys-rep" ] || timeout 60 QdstrmImporter -i "$1.qdstrm" >/dev/null
  timeout 60 nsys export --type sqlite --force-overwrite true -o "$1.sqlite" "$1.nsys-rep" \
    >/dev/null || log "export of $1 failed"
}
analyze() {  # TRACE JSON
  timeout 60 "$PY" -m traceinspect analyze "$1" --json "$2" --force >"$2.txt" 2>&1 \
    || log "analyze $1 exited $?"
}

record_all() {
log "environment"
nvidia-smi -L; nsys --version
"$PY" -c "import torch; print('torch', torch.__version__, torch.cuda.device_count(), 'GPUs')"

log "tiny_mlp: traceinspect profile --nsys"
timeout 110 "$PY" -m traceinspect profile --nsys --iters 30 -o "$T/tiny_nsys" \
  examples/tiny_mlp.py -- --steps 30 >"$T/tiny_nsys.log" 2>&1
log "exit $? (the script's)"; tail -25 "$T/tiny_nsys.log"

log "tiny_mlp: nsys profile by hand"
timeout 60 "${NSYS[@]}" -o "$T/hand" "$PY" examples/tiny_mlp.py --steps 30 >/dev/null 2>&1
report "$T/hand" && analyze "$T/hand.sqlite" "$T/hand.analysis.json"

log "tiny_mlp: traceinspect profile (torch.profiler)"
timeout 80 "$PY" -m traceinspect profile --iters 30 -o "$T/tiny_torch" \
  examples/tiny_mlp.py -- --steps 30 >"$T/tiny_torch.log" 2>&1
log "exit $?"

log "ddp: unprofiled"
timeout 45 torchrun --nproc-per-node 2 "$here/ddp_step.py" 2>&1 | grep '^{' | tee "$T/ddp_plain.json"
log "ddp: nsys profile torchrun"
timeout 90 "${NSYS[@]}" -o "$T/ddp" torchrun --nproc-per-node 2 "$here/ddp_step.py" 2>&1 \
  | grep '^{' | tee "$T/ddp_nsys.json"
report "$T/ddp" && analyze "$T/ddp.sqlite" "$T/ddp.analysis.json"
"$PY" "$here/trim_export.py" "$T/ddp.sqlite" "$out/ddp.sqlite.gz" --from-range train_step
log "ddp: torch.profiler"
timeout 70 torchrun --nproc-per-node 2 "$here/ddp_step.py" --torch-profiler "$T/ddp_kineto" \
  2>&1 | grep '^{' | tee "$T/ddp_kineto.json"
for r in 0 1; do analyze "$T/ddp_kineto/rank$r.json.gz" "$T/ddp_kineto/rank$r.analysis.json"; done

log "region() cost"
"$PY" bench/region_overhead.py --pairs 50000 | tee "$T/bench_plain.json"
timeout 60 nsys profile --trace=nvtx --sample=none --cpuctxsw=none --force-overwrite=true \
  -o "$T/bench" "$PY" bench/region_overhead.py --here --pairs 50000 | grep '^{' \
  | tee "$T/bench_nsys.json"

}

summarize() {
log "summary"
"$PY" - "$T" "$out/summary.json" <<'PY'
import json, sys
from pathlib import Path
t = Path(sys.argv[1])
def regions(path):
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        return f"missing: {exc}"
    return [
        {k: r.get(k) for k in ("name", "process", "source", "verdict", "occurrences", "kernels",
                               "wall_us", "window_us", "gpu_busy_share")}
        | {"graphed_us": (r.get("estimate") or {}).get("graphed_us"),
           "saving_frac": (r.get("estimate") or {}).get("saving_frac")}
        for r in data["regions"]
    ]
summary = {
    "tiny_nsys": regions(t / "tiny_nsys/analysis.json"),
    "tiny_hand": regions(t / "hand.analysis.json"),
    "tiny_torch": regions(t / "tiny_torch/analysis.json"),
    "ddp_nsys": regions(t / "ddp.analysis.json"),
    "ddp_kineto_rank0": regions(t / "ddp_kineto/rank0.analysis.json"),
    "ddp_kineto_rank1": regions(t / "ddp_kineto/rank1.analysis.json"),
}
Path(sys.argv[2]).write_text(json.dumps(summary, indent=1))
for key, rows in summary.items():
    print(key)
    for r in rows if isinstance(rows, list) else [rows]:
        print("  ", r if isinstance(r, str) else
              f"{r['name']} [{r['process']}] {r['verdict']} occ={r['occurrences']} "
              f"kernels={r['kernels']} graphed={r['graphed_us']} saving={r['saving_frac']}")
PY

log "bundle"
gzip -9 -k "$T/ddp.sqlite" 2>/dev/null && [ "$(stat -c %s "$T/ddp.sqlite.gz")" -lt 15000000 ] \
  && cp "$T/ddp.sqlite.gz" "$out/ddp_full.sqlite.gz"
for f in tiny_nsys/report.sqlite hand.sqlite; do gzip -9 -k "$T/$f" 2>/dev/null; done
(cd "$T" && tar czf "$out/single.tar.gz" bench_*.json tiny_nsys/results.json \
  tiny_nsys/analysis.json tiny_nsys/report.sqlite.gz tiny_nsys.log hand.sqlite.gz \
  hand.analysis.json* tiny_torch/results.json tiny_torch/analysis.json tiny_torch.log \
  2>/dev/null)
(cd "$T" && tar czf "$out/ddp_rest.tar.gz" ddp_*.json ddp.analysis.json* ddp_kineto 2>/dev/null)
ls -la "$out"
}

if [ "${2:-}" != summary ]; then
  rm -rf "$T" && mkdir -p "$T"
  record_all
fi
summarize
