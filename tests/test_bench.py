"""The benchmark's trace scaler builds a valid, consistent big trace; its RSS probe is exact.

Correctness of the synthetic trace only: timings are measured by ``bench/run.py``, never here.
"""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, corpus_file

from traceinspect.parse import load_trace

BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

from make_big_trace import parse_size, write_big_trace  # noqa: E402

# AlexNet on an A100: 79 kernels + 19 memcpy/memset, 361 runtime calls, 155 ac2g flow starts
# and 345 finishes, integer-µs timestamps; 243 KB of compact JSON per copy.
ALEXNET = "HolisticTraceAnalysis__benchmark_result_2869224_1695835535_trace.json.gz"
# ROCm MI250: fractional-µs timestamps, baseTimeNanoseconds, fwdbwd flows, 2 profiler steps.
MI250 = "HolisticTraceAnalysis__mi250_minitoy_train_ROCm6_2_kineto.json.gz"


def _events(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


@pytest.mark.corpus
def test_three_copies_triple_every_kernel_and_keep_each_launch(tmp_path: Path) -> None:
    source = corpus_file(ALEXNET)
    out = tmp_path / "alexnet_x3.json.gz"
    # GIVEN the command line as a user runs it
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "make_big_trace.py"),
            str(source),
            "--copies",
            "3",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "3 whole copies" in proc.stdout

    small, big = load_trace(source), load_trace(out)
    # THEN 3x the kernels (79 -> 237), each still joined to its cudaLaunchKernel
    assert len(small.kernels) == 79
    assert len(big.kernels) == 237
    assert len(big.gpu) == 3 * 98
    assert len(big.host) == 3 * 361
    assert int((big.kernels["launch_row"] == -1).sum()) == 0
    launch_corr = big.host["correlation"].to_numpy()[big.kernels["launch_row"].to_numpy()]
    np.testing.assert_array_equal(launch_corr, big.kernels["correlation"].to_numpy())
    assert big.kernels["correlation"].nunique() == 237
    # Copies do not overlap: the later copies start after the source's span.
    span = int(small.gpu["end_ns"].max() - small.host["start_ns"].min())
    starts = np.sort(big.kernels["start_ns"].to_numpy())
    assert starts[79] - starts[0] > span
    # Device properties are carried once, not per copy.
    assert [d.name for d in big.meta.devices] == [d.name for d in small.meta.devices]

    doc = _events(out)
    flows = Counter((e["ph"], e["id"]) for e in doc["traceEvents"] if e.get("ph") in ("s", "f"))
    # Every flow id is unique per phase across copies (3 x (155 s + 345 f)), and a start
    # finds its finish exactly as often as in the source (139 of 155 there).
    assert len(flows) == 3 * (155 + 345)
    assert set(flows.values()) == {1}
    finishes = {i for p, i in flows if p == "f"}
    assert sum(i in finishes for p, i in flows if p == "s") == 3 * 139
    src_meta = sum(e.get("ph") == "M" for e in _events(source)["traceEvents"])
    assert sum(e.get("ph") == "M" for e in doc["traceEvents"]) == src_meta


@pytest.mark.corpus
def test_fractional_timestamps_stay_exact_and_steps_continue(tmp_path: Path) -> None:
    source = corpus_file(MI250)
    out = tmp_path / "mi250_x2.json"
    stats = write_big_trace(source, out, copies=2)
    assert stats["copies"] == 2

    small, big = load_trace(source), load_trace(out)
    assert len(small.kernels) == 14
    assert len(big.kernels) == 28
    assert int((big.kernels["launch_row"] == -1).sum()) == 0
    # The second copy is the first shifted by one whole ns-exact step (no float64 rounding).
    first = small.kernels["start_ns"].to_numpy()
    second = np.sort(big.kernels["start_ns"].to_numpy())[14:]
    shifts = set((second - np.sort(first)).tolist())
    assert len(shifts) == 1
    assert shifts.pop() % 1000 == 0  # a whole number of µs
    steps = big.annotations[big.annotations["source"] == "profiler_step"]["name"].tolist()
    assert len(steps) == 4
    assert len(set(steps)) == 4  # ProfilerStep#N renumbered in the copy


@pytest.mark.corpus
def test_size_target_is_reached_within_one_event(tmp_path: Path) -> None:
    source = corpus_file(ALEXNET)
    out = tmp_path / "alexnet_1MB.json"
    target = parse_size("1MB")
    stats = write_big_trace(source, out, size=target)
    size = out.stat().st_size
    assert stats["bytes"] == size
    assert stats["copies"] == 4  # 1 MB / 243 KB per copy, then a time-prefix of a 5th
    assert abs(size - target) < 2_000  # within one event of the target
    small, big = load_trace(source), load_trace(out)
    # The 5th copy's first 28 KB of events (by time) are CPU ops before the first kernel.
    assert len(big.kernels) == 4 * 79
    assert len(big.cpu_ops) > 4 * len(small.cpu_ops)
    assert int((big.kernels["launch_row"] == -1).sum()) == 0


def test_parse_size_units() -> None:
    assert parse_size("200MB") == 200_000_000
    assert parse_size("1GB") == 1_000_000_000
    assert parse_size("1.5GiB") == 3 * 2**29
    with pytest.raises(ValueError, match="bad size"):
        parse_size("lots")


def test_peak_rss_is_the_childs_high_water_mark() -> None:
    # GIVEN a child that touches 200 MiB and then frees it, measured from a small parent:
    # Linux carries a forking parent's resident size into the child's ru_maxrss (the copied
    # address space counts until exec), so measuring from inside a big pytest process would
    # report the parent's size, not the child's (bench/run.py itself stays small).
    code = "b = bytearray(200 * 2**20); del b"
    probe = (
        f"import sys; sys.path.insert(0, {str(BENCH)!r}); from run import run_measured; "
        f"w, c, rss, rc, _ = run_measured([sys.executable, '-c', {code!r}], timeout_s=60); "
        "print(w, c, rss, rc)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    wall, cpu, rss, exit_code = float(out[0]), float(out[1]), int(out[2]), int(out[3])
    assert exit_code == 0
    # THEN its peak (not its final size) is reported, plus the interpreter (~10-30 MiB)
    assert 200 * 2**20 < rss < 260 * 2**20
    assert wall > 0 and cpu > 0


def test_holdout_pins_prints_what_the_tests_pin(capsys: pytest.CaptureFixture[str]) -> None:
    # holdout42's first recording, as tests/test_holdout_probe.py pins it: the BiGRU beside an
    # LSTM language model +5.9 / +5.9 %, the set 7 of 8 within ±10 % either way, the 1-D
    # UNet's saving 21 points off, every step launch-bound
    from holdout_pins import main

    assert main(["holdout42"]) == 0
    out = capsys.readouterr().out
    assert '"bigru_asr_encoder_beside_lm_2streams_b8": (2649.4, 2805.8, 2804.4)' in out
    assert '("holdout42", True, 7, 0.0364, 0.1004),' in out
    assert '("holdout42", False, 7, 0.0362, 0.1083),' in out
    assert "savings beyond 15 points ['unet1d_audio_diffusion_b4 -20.8']" in out
    assert "# verdicts: {'launch-bound': 8}" in out
    # the set's row of docs/validation.md with the current model's columns as written there
    # (the tool cannot know the set's figures at its freeze, and repeats the current ones)
    current = "| 7/8 | 3.6 % | \N{MINUS SIGN}1.0 % | 10.8 % | 8/8 | 7/8 | 31 % |"
    assert "| `holdout42` | 8 | 7/8 | 3.6 % " + current in out
    docs = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    assert "| `holdout42` | 8 | 6/8 | 4.4 % " + current in docs
    assert "disagrees" not in out and "CONTRADICTION" not in out


def test_holdout_pins_refuses_a_recording_that_is_not_there(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from holdout_pins import main

    assert main(["no_such_recording"]) == 2
    assert "no recording" in capsys.readouterr().err


def test_light_beside_reads_what_light_kernels_lost_beside_other_streams() -> None:
    # holdout42's character BiLSTM beside word features: 203 light kernels ran beside only
    # other streams' light kernels (the two directions' cells, side by side step after
    # step), a median 2.3 µs alone, 1.33x that (768 ns more): what LIGHT_BESIDE_NS charges
    from light_beside import measured
    from validation_table import VALIDATION_DIR

    rows = measured(VALIDATION_DIR / "holdout42" / "bilstm_char_word_ner_2streams_b16")
    light = [r for r in rows if not r.beside_matrix]
    assert (len(rows), len(light)) == (877, 203)
    assert statistics.median(r.alone_ns for r in light) == 2304
    assert statistics.median(r.ratio for r in light) == pytest.approx(1.333, abs=0.001)
    assert statistics.median((r.ratio - 1) * r.alone_ns for r in light) == pytest.approx(768)


def test_light_beside_slope_reads_the_slowdown_per_share_of_matrix_kernels(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # holdout42's two workloads whose light kernels ran beside matrix kernels holding at
    # least 0.3 of the device: 4,041 kernels, slowed a median 0.82x per unit of H where the
    # GEMMs held 0.6-0.8 of it (LIGHT_SLOWDOWN charges 1.3x)
    import light_beside

    monkeypatch.setattr(sys, "argv", ["light_beside.py", "--slope", "--sets", "holdout42"])
    assert light_beside.main() == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["group", "kernels", "wl"]
    row = next(line for line in lines if line.startswith("H 0.6-0.8, 0-2.5 µs"))
    assert row.split()[4:10] == ["2,843", "2", "1.58x", "H", "0.70", "0.82"]
    total = next(line for line in lines if line.startswith("H 0.3-1.01, all"))
    assert total.split()[3:5] == ["4,041", "2"]
    assert lines[-1] == "schedule: LIGHT_SLOWDOWN 1.3"


def test_replay_nodes_sets_the_schedule_beside_the_replays() -> None:
    # holdout32's convolution beside a GEMM chain (+10.9 %): all five profiled replays match
    # the graph kernel for kernel; the schedule starts the 85 µs convolution 48.8 µs in,
    # once the chain's first GEMMs and the light kernels charged beside them leave it room
    # (87.8 µs; it ran packed beside those GEMMs, 136.5 µs, before a light kernel beside
    # another stream's was charged LIGHT_BESIDE_NS), and holds the chain's next GEMM until
    # it ends, where the replays ran the two side by side (the convolution 184.5 µs, the
    # GEMM from 73.1 µs)
    from replay_nodes import Aligned, node_error, predicted_graphs, replays

    name = "holdout32/conv_beside_gemm_2streams_b8"
    prepared, graphs = predicted_graphs(name)
    graph = graphs[0]
    assert len(graph.rows) == 46 and len(np.unique(graph.keys)) == 3
    trace = next(prepared.workload.trace.parent.glob("*.graphed.json.gz"))
    a = Aligned.of(prepared.timeline.gpu, graph, replays(trace))
    assert len(a.replays) == 5
    assert [round(s / 1000, 1) for s in a.spans()] == [326.7, 309.9, 335.5, 337.9, 336.4]
    conv = next(x for x in a.nodes if "cutlass__5x_cudnn" in x[1][0])
    i, key, n = conv
    assert (a.end[i] - a.start[i]) / 1000 == pytest.approx(87.8, abs=0.5)
    traced = sorted((r[key][n][1] - r[key][n][0]) / 1000 for r in a.replays)
    assert traced[2] == pytest.approx(184.5, abs=0.1)
    # the schedule holds the chain's next GEMM (one block to an SM) until the convolution
    # makes room (176.9 µs while the GELU before it waited for all its room too, 171.3 µs
    # before LIGHT_BESIDE_NS)
    gemm = [x for x in a.nodes if x[1][0].startswith("nvjet_sm90_tst_64x56")][1]
    assert a.start[gemm[0]] / 1000 == pytest.approx(141.1, abs=1.0)
    assert np.median([r[gemm[1]][gemm[2]][0] for r in a.replays]) / 1000 == pytest.approx(
        73.1, abs=0.1
    )
    # node by node the schedule is further from the replays than before the charge (0.103)
    assert node_error(name) == pytest.approx(0.186, abs=0.002)


def test_replay_nodes_schedules_cudnns_hand_overs_as_the_low_end_reads_them() -> None:
    # holdout45's fp32 GRU: cuDNN's layer 2 (its input GEMMs on stream 14) starts 202 µs into
    # the replays, after layer 1's first 12 steps; the prediction holds it until 362 µs, a
    # chunk later; handed over by the chunk its event id names, 207 µs
    from replay_nodes import Aligned, predicted_graphs, replays

    name = "holdout45/gru_fp32_one_stream_b16"
    starts = []
    for handed_over in (False, True):
        prepared, graphs = predicted_graphs(name, handed_over)
        graph = graphs[0]
        trace = next(prepared.workload.trace.parent.glob("*.graphed.json.gz"))
        a = Aligned.of(prepared.timeline.gpu, graph, replays(trace))
        assert len(a.replays) == 5
        i, key, n = next(x for x in a.nodes if int(graph.keys[x[0]]) % 1000 == 14)
        replayed = np.median([r[key][n][0] for r in a.replays]) / 1000
        starts.append((round(a.start[i] / 1000, 1), round(float(replayed), 1)))
    assert starts == [(362.1, 202.0), (207.2, 202.0)]


@pytest.mark.parametrize(
    ("probe", "gemm_start_us"),
    [("conv_first_2streams_b8", 17.4), ("gemm_first_2streams_b8", 17.6)],
)
def test_a_graphs_branches_start_by_room_not_by_capture_order(
    probe: str, gemm_start_us: float
) -> None:
    # The branch-order probes (holdout32's convolution and GEMM branches forked in either
    # order): in the replays' median the GEMM branch's first GEMM starts as the convolution
    # branch's layout transform ends, whichever branch was captured first
    from replay_nodes import Aligned, predicted_graphs, replays

    name = f"branch_order/{probe}"
    prepared, graphs = predicted_graphs(name)
    graph = graphs[0]
    trace = next(prepared.workload.trace.parent.glob("*.graphed.json.gz"))
    a = Aligned.of(prepared.timeline.gpu, graph, replays(trace))
    assert len(a.replays) == 5

    def median_span(node: tuple[int, Any, int]) -> tuple[float, float]:
        _, key, n = node
        return (
            float(np.median([r[key][n][0] for r in a.replays])) / 1000,
            float(np.median([r[key][n][1] for r in a.replays])) / 1000,
        )

    gemm = next(x for x in a.nodes if x[1][0].startswith("nvjet_sm90_tst_192x80"))
    layout = next(x for x in a.nodes if "nchwToNhwcKernel" in x[1][0])
    assert median_span(gemm)[0] == pytest.approx(gemm_start_us, abs=0.1)
    assert median_span(layout)[0] == pytest.approx(0.0, abs=0.1)
    assert median_span(layout)[1] == pytest.approx(gemm_start_us, abs=1.0)
