#!/usr/bin/env bash
# Record the validation set through the product: every workload under `traceinspect profile`.
#
#   bash sample_traces/validation/record.sh OUT_DIR [PART ...]
#
# PART: `workloads` (the annotated scripts in workloads/), `unannotated` (the scripts in
# unannotated/: a plain run, a run with stacks, and a --mark run), `stacks` (the cost of
# recording Python stacks), or a workload name (e.g. decoder_b1, unannotated/lstm_loop).
# Default: all three parts. Run from the project root on the GPU machine. Writes, per
# workload, OUT_DIR/pack/<name>/ with results.json and the candidate's eager and graphed
# traces; per unannotated script OUT_DIR/pack/unannotated/<name>/ with the plain run's
# trace.json.gz, results.json and analysis.json, trace.stacks.json.gz (the same run with
# Python stacks) and mark.results.json (+ the candidate traces of the --mark run);
# OUT_DIR/pack/environment.json and stack_cost.json; then OUT_DIR/validation.tar of pack/.
#
# Environment: PYTHON (default python3), REPEATS (5), ITERS (timed steps per round, 50),
# PROFILE_STEPS (5), IN_PROCESS_TIMING=1 (time the candidates in the profiled process: --no-fresh-timing; fresh-process timing is profile's default; FRESH_TIMING=1 passes --fresh-timing, for recordings made before that default), WORKLOAD_DIR (the annotated scripts' folder), STEP_TIMEOUT (seconds per profile run, 240), SMOKE=1 (tiny sizes on a
# CPU, to check this script: candidates are then listed but not measured).
set -uo pipefail

out=${1:?usage: record.sh OUT_DIR [PART ...]}
shift
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(workloads unannotated stacks)
here=sample_traces/validation
wdir=${WORKLOAD_DIR:-$here/workloads}  # record_holdout.sh points it at holdout_workloads/
py=${PYTHON:-python3}
repeats=${REPEATS:-5}
iters=${ITERS:-50}
profile_steps=${PROFILE_STEPS:-5}
step_timeout=${STEP_TIMEOUT:-240}
smoke=()
[ -n "${SMOKE:-}" ] && smoke=(--smoke)
fresh=()
[ -n "${FRESH_TIMING:-}" ] && fresh=(--fresh-timing)
[ -n "${IN_PROCESS_TIMING:-}" ] && fresh=(--no-fresh-timing)
export PYTHONUNBUFFERED=1
work="$out/work"
pack="$out/pack"
mkdir -p "$work" "$pack/unannotated"
failed=()

profile() {  # profile NAME SCRIPT OUT [SCRIPT ARGS...]
    local name=$1 script=$2 dest=$3
    shift 3
    local t0=$SECONDS
    timeout "$step_timeout" "$py" -m traceinspect profile "$script" --out "$dest" --force \
        --repeats "$repeats" --iters "$iters" --profile-steps "$profile_steps" "${fresh[@]}" \
        -- "$@" >"$dest.log" 2>&1
    local rc=$?
    echo "[$name] rc=$rc $((SECONDS - t0)) s"
    [ $rc -eq 0 ] || { failed+=("$name"); tail -5 "$dest.log"; }
    return 0
}

keep_candidate() {  # keep_candidate FROM TO [PREFIX]: results.json and the candidate traces
    local from=$1 to=$2 prefix=${3:-}
    mkdir -p "$to"
    [ -f "$from/results.json" ] && cp "$from/results.json" "$to/${prefix}results.json"
    for f in "$from"/*.eager.json.gz "$from"/*.graphed.json.gz; do
        [ -f "$f" ] && cp "$f" "$to/$prefix$(basename "$f")"
    done
    [ -f "$from.log" ] && gzip -n -9 -c "$from.log" >"$to/${prefix}profile.log.gz"
    return 0
}

annotated() {  # annotated NAME
    local name=$1
    profile "$name" "$wdir/$name.py" "$work/$name" --steps 20 "${smoke[@]}"
    keep_candidate "$work/$name" "$pack/$name"
}

unannotated() {  # unannotated NAME
    local name=$1 dest="$pack/unannotated/$1" t0
    mkdir -p "$dest"
    # 1. the unmodified script, as a user would first run it
    profile "unannotated/$name" "$here/unannotated/$name.py" "$work/u_$name" "${smoke[@]}"
    for f in trace.json.gz results.json analysis.json; do
        [ -f "$work/u_$name/$f" ] && cp "$work/u_$name/$f" "$dest/"
    done
    [ -f "$work/u_$name.log" ] && gzip -n -9 -c "$work/u_$name.log" >"$dest/profile.log.gz"
    # 2. the same run with Python stacks
    t0=$SECONDS
    timeout "$step_timeout" "$py" "$here/stack_cost.py" trace "$here/unannotated/$name.py" \
        --out "$dest/trace.stacks.json.gz" -- "${smoke[@]}" >"$work/s_$name.log" 2>&1 \
        || failed+=("stacks/$name")
    echo "[unannotated/$name with stacks] $((SECONDS - t0)) s"
    # 3. --mark: the same step as a graph candidate, measured eager and graphed
    profile "unannotated/$name --mark" "$here/unannotated/$name.py" "$work/m_$name" \
        --mark "${smoke[@]}"
    keep_candidate "$work/m_$name" "$dest" mark.
}

environment() {
    "$py" - "$pack/environment.json" <<'PY'
import datetime, json, platform, subprocess, sys
import torch
def smi(q):
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as exc:
        return f"unavailable: {exc}"
cuda = torch.cuda.is_available()
env = {
    "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "gpu": torch.cuda.get_device_name() if cuda else None,
    "driver": smi("driver_version") if cuda else None,
    "gpu_clocks": smi("clocks.sm,clocks.max.sm,clocks.mem,power.limit") if cuda else None,
    "torch": torch.__version__, "cuda": torch.version.cuda,
    "cudnn": torch.backends.cudnn.version() if cuda else None,
    "python": platform.python_version(), "host": platform.node(),
    "cpu_count": __import__("os").cpu_count(),
}
open(sys.argv[1], "w").write(json.dumps(env, indent=1) + "\n")
print(json.dumps(env))
PY
}

environment
for part in "${parts[@]}"; do
    case $part in
    workloads)
        for f in "$wdir"/[a-z]*.py; do annotated "$(basename "$f" .py)"; done ;;
    unannotated)
        for f in "$here"/unannotated/[a-z]*.py; do unannotated "$(basename "$f" .py)"; done ;;
    stacks)
        t0=$SECONDS
        "$py" "$here/stack_cost.py" cost --out "$pack/stack_cost.json" "${smoke[@]}" \
            "$here/workloads/mlp_narrow_fp32.py" "$here/workloads/decoder_b16.py" \
            || failed+=(stacks)
        echo "[stack cost] $((SECONDS - t0)) s" ;;
    unannotated/*) unannotated "${part#unannotated/}" ;;
    *) annotated "$part" ;;
    esac
done
tar -cf "$out/validation.tar" -C "$pack" .
echo "packed $(du -sh "$out/validation.tar" | cut -f1) into $out/validation.tar"
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}"
    exit 1
fi
