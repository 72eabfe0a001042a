"""The regions table fits the terminal: a layout per width that never drops the answer."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, corpus_file, sample_file

from traceinspect.cli import main
from traceinspect.report.layout import PIPED_WIDTH, abbreviate, abbreviate_apart, render_width

ANSWER = ("verdict", "graphed", "saving", "capture")


def analyze_at(width: int | None, trace: Path, capsys: pytest.CaptureFixture[str],
               monkeypatch: pytest.MonkeyPatch) -> str:
    if width is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(width))
    assert main(["analyze", str(trace)]) == 0
    return capsys.readouterr().out


def regions_block(out: str) -> list[str]:
    """The regions table: from its header row to the last row before the first blank-ish line."""
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("region "))
    rows = []
    for line in lines[head:]:
        if not line.strip() or line.startswith(("not shown", "ProfilerStep ")) and rows[2:]:
            break
        rows.append(line)
    return rows


@pytest.mark.parametrize(
    ("width", "columns"),
    [
        (80, ["region", "verdict", "busy", "most idle", "graphed", "saving", "capture"]),
        (100, ["region", "verdict", "occ", "window", "busy", "most idle", "graphed", "saving",
               "capture"]),
        (140, ["region", "verdict", "occ", "wall", "window", "busy", "kernels", "launch", "sync",
               "copy", "dep", "other", "graphed", "saving", "capture"]),
        (200, ["region", "verdict", "occ", "wall", "window", "busy", "kernels", "launch", "sync",
               "copy", "dep", "other", "graphed", "saving", "capture"]),
    ],
)
def test_regions_table_fits_each_width_and_keeps_the_answer(
    width: int, columns: list[str], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN the mixed H200 step; WHEN analyzed at `width` columns (piped, COLUMNS set)
    out = analyze_at(width, sample_file("mixed.eager.json.gz"), capsys, monkeypatch)
    # THEN no line is wider than the terminal
    assert max(len(line) for line in out.splitlines()) <= width
    table = regions_block(out)
    assert table[0].split() == [c for part in columns for c in part.split()]
    # AND every row carries the verdict, graphed time, saving and capture verdict
    rows = {line.split()[0]: line for line in table[2:6]}
    assert set(rows) == {"ProfilerStep", "step", "attention", "mlp"}
    assert re.search(r"launch-bound .* 151 µs +82% +ok as-is$", rows["attention"].rstrip())
    assert re.search(r"compute-bound .* 2,011 µs +0% +ok as-is$", rows["mlp"].rstrip())
    step = rows["ProfilerStep"].rstrip()
    assert re.search(r"launch-bound .* 2,146 µs +24% +after changes$", step)
    hidden = "not shown at this width" in out
    assert hidden == (width < 140)


def test_piped_width_is_columns_or_100() -> None:
    assert render_width(io.StringIO(), {}) == PIPED_WIDTH == 100
    assert render_width(io.StringIO(), {"COLUMNS": "132"}) == 132
    assert render_width(io.StringIO(), {"COLUMNS": "junk"}) == 100
    assert render_width(io.StringIO(), {"COLUMNS": "10"}) == 40  # never narrower than 40


def test_piped_without_columns_renders_at_100(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = analyze_at(None, sample_file("host_sync.eager.json.gz"), capsys, monkeypatch)
    assert max(len(line) for line in out.splitlines()) <= 100
    table = regions_block(out)
    assert table[0].split()[:4] == ["region", "verdict", "occ", "window"]
    check = next(line for line in table if line.split()[0] == "check")
    # mixed by its gaps, but predicted to save 43 %: launch-bound (verdict.agree)
    assert check.split()[1:3] == ["launch-bound", "5"]
    # graphed 17.4 µs, saving 43 % (test_decision: the .item() check saves more than a
    # graph launch)
    assert check.rstrip().endswith("17.4 µs     43%  after changes")


def test_long_region_names_are_abbreviated_on_the_terminal_and_full_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a trace whose record_function names are long and decorated ("## forward:… ##")
    trace = corpus_file("HolisticTraceAnalysis__trace_diff__control.json.gz")
    monkeypatch.setenv("COLUMNS", "80")
    out_json = tmp_path / "r.json"
    assert main(["analyze", str(trace), "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    regions = json.loads(out_json.read_text())["regions"]
    assert "## forward:pos_w ##" in [r["name"] for r in regions]
    # THEN names that fit are shown whole, longer ones lose their decoration, then their middle
    table = regions_block(out)
    name_width = table[0].index("verdict") - 2
    assert name_width == 20  # the verdict column fits "communication-bound"
    assert any(re.match(r"    (## )?forward:pos_w( ##)? +launch-bound", line) for line in table)
    long_ones = [r for r in regions[:12] if len(r["name"]) + 2 * r["depth"] > name_width]
    assert len(long_ones) >= 3
    shown = {line[:name_width].rstrip() for line in table}
    for r in long_ones:
        assert not any(r["name"] in line for line in table)
        short = abbreviate(r["name"], name_width - 2 * r["depth"])
        assert short != r["name"] and len(short) <= name_width - 2 * r["depth"]
        assert any(line.startswith("  " * r["depth"] + short[:4]) for line in table)
    # AND names that differ still read apart: the cut moves where the default one would show
    # two of them alike ("permute_…eatures" twice, "forward:…bal_emb" three times)
    assert "    permute_id_l…res" in shown and "    permute_id_s…res" in shown
    assert {"    forward:a…al_emb", "    forward:w…al_emb", "    forward:p…al_emb"} <= shown
    assert not any("permute_…eatures" in line for line in table)


def test_abbreviate_keeps_what_tells_names_apart() -> None:
    kernel = (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1>)"
    )
    assert abbreviate(kernel, 200) == kernel
    assert abbreviate(kernel, 60) == "at::native::vectorized_elementwise_kernel<…>(…)"
    assert abbreviate(kernel, 20) == "at::native…nel<…>(…)"
    assert abbreviate("## forward ##", 10) == "forward"
    assert abbreviate("decoder.layers.31.self_attention", 16) == "decoder.…tention"
    assert len(abbreviate("x" * 50, 7)) == 7
    assert abbreviate("unbalanced<(", 5) == "un…<("
    # a parenthesis after a space names the range (one FSDP range per layer): it stays
    fsdp = "FSDP::pre_forward (encoder.block.14.layer.1)"
    assert abbreviate(fsdp, 30) == "FSDP::pre_forwa…ck.14.layer.1)"
    assert abbreviate("[pid 111] " + fsdp, 40) == "[pid 111] FSDP::pre_…r.block.14.layer.1)"


def test_subprocess_respects_columns() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "traceinspect", "analyze",
         str(sample_file("tiny_mlp.eager.json.gz"))],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    assert "launch-bound" in done.stdout and "capture" in done.stdout


@pytest.mark.parametrize("width", [80, 100])
def test_top_kernels_table_keeps_its_numbers_whole_at_narrow_widths(
    width: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN the mixed H200 step, whose kernel names run to 100+ characters
    out = analyze_at(width, sample_file("mixed.eager.json.gz"), capsys, monkeypatch)
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if "Top kernels" in line)
    table = lines[head + 1 : head + 15]
    # THEN the headers and figures are whole (the name column gives way) and nothing is wider
    header = next(line for line in table if "kernel" in line)
    for column in ("count", "total µs", "mean µs", "share"):
        assert column in header
    top = next(line for line in table if "coopB_NNT" in line)
    assert "8,256.3" in top and "825.6" in top and "78.6%" in top
    assert all(len(line.rstrip()) <= width for line in table)


def test_abbreviate_apart_moves_the_cut_where_names_would_read_alike() -> None:
    # GIVEN the FSDP ranges of a real two-process Nsight export, one per layer
    names = [f"FSDP::pre_forward (encoder.block.{b}.layer.{k})" for b in (14, 15) for k in (0, 1)]
    # WHEN they must fit 11 characters: the default cut shows them all alike
    assert {abbreviate(n, 11) for n in names} == {"FSDP:…er.0)", "FSDP:…er.1)"}
    # THEN the cut keeps the tail, where they differ, and each reads apart
    assert abbreviate_apart([(n, 11) for n in names]) == [
        "…4.layer.0)",
        "…4.layer.1)",
        "…5.layer.0)",
        "…5.layer.1)",
    ]
    # AND names that read apart already, or the same name twice, keep the default cut
    assert abbreviate_apart([("forward:pos_w_embedding", 11), ("backward:pos_w", 11)]) == [
        abbreviate("forward:pos_w_embedding", 11),
        abbreviate("backward:pos_w", 11),
    ]
    assert abbreviate_apart([(names[0], 11), (names[0], 11)]) == [abbreviate(names[0], 11)] * 2


def test_kernels_that_read_alike_show_the_operation_that_tells_them_apart() -> None:
    # GIVEN PyTorch's elementwise kernels of the corpus's FSDP export: their names differ only
    # inside template arguments, which a short cell collapses
    mul = (
        "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::"
        "gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::"
        "binary_internal::MulFunctor<float>>>(at::TensorIteratorBase &, const T1 &)::"
        "[lambda(int) (instance 1)]>(int, T3)"
    )
    copy = (
        "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::"
        "gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)"
        "::[lambda() (instance 3)]::operator ()() const::[lambda(float) (instance 1)]>"
        "(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)"
    )
    add = (
        "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add"
        "<float>, std::array<char *, (unsigned long)3>>(int, T2, T3)"
    )
    scale = (
        "void at::native::vectorized_elementwise_kernel<(int)4, at::native::AUnaryFunctor<float,"
        " float, float, at::native::binary_internal::MulFunctor<float>>, std::array<char *, "
        "(unsigned long)2>>(int, T2, T3)"
    )
    assert abbreviate(mul, 52) == abbreviate(copy, 52) == "at::native::elementwise_kernel<…>(…)"
    # THEN each shows the word naming its operation, its namespaces dropped where needed
    assert abbreviate_apart([(n, 52) for n in (mul, copy, add, scale)]) == [
        "at::native::elementwise_kernel<…MulFunctor…>(…)",
        "elementwise_kernel<…direct_copy_kernel_cuda…>(…)",
        "vectorized_elementwise_kernel<…CUDAFunctor_add…>(…)",
        "vectorized_elementwise_kernel<…MulFunctor…>(…)",
    ]
    # AND a name with no room for its word keeps the default cut
    # AND a word with too little room keeps its tail; with none, the name keeps the default cut
    assert abbreviate_apart([(mul, 30), (copy, 30)]) == [
        "ele…e_kernel<…MulFunctor…>(…)",
        "ele…e_kernel<…kernel_cuda…>(…)",
    ]
    assert abbreviate_apart([(mul, 20), (copy, 20)]) == [abbreviate(mul, 20)] * 2


def test_kernels_with_no_operation_word_show_the_template_argument_that_differs() -> None:
    # GIVEN cuDNN's and CUTLASS's kernels of HTA's DDP trace (nccl_data), named apart only
    # by a generated kernel name or a number among their template arguments
    def gemm(shape: str) -> str:
        kernel = f"cutlass_80_tensorop_s1688gemm_{shape}_align4"
        return f"void cutlass::Kernel<{kernel}>({kernel}::Params)"

    def batch_norm(threads: int) -> str:
        return (
            f"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, {threads}, true, 1>(float,"
            " float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float"
            " const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*,"
            " float const*, float)"
        )

    gemms = [gemm(s) for s in ("256x64_16x4_nn", "256x64_16x4_nt", "64x64_16x6_tn")]
    norms = [batch_norm(32), batch_norm(128)]
    assert {abbreviate(n, 52) for n in gemms} == {"cutlass::Kernel<…>(…)"}
    # THEN each shows the argument that differs: whole where it fits, else its tail, and
    # without an ellipsis on the side where the argument list ends
    assert abbreviate_apart([(n, 52) for n in gemms + norms]) == [
        "Kernel<…tensorop_s1688gemm_256x64_16x4_nn_align4>(…)",
        "Kernel<…tensorop_s1688gemm_256x64_16x4_nt_align4>(…)",
        "Kernel<…_tensorop_s1688gemm_64x64_16x6_tn_align4>(…)",
        "cudnn::bn_bw_1C11_kernel_new<…32…>(…)",
        "cudnn::bn_bw_1C11_kernel_new<…128…>(…)",
    ]
    assert abbreviate_apart([(n, 80) for n in gemms[:2]]) == [
        "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(…)",
        "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4>(…)",
    ]


def test_generated_names_that_differ_inside_are_cut_around_the_difference() -> None:
    # GIVEN two of Tensile's GEMM kernels from TraceLens's vLLM decode trace (MI300), 447
    # characters each, differing in two fields in the middle
    tensile = (
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1"
        "_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942"
        "_IU1_K1_LBSPPA512_LBSPPB512_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40"
        "_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS8_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0"
        "_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1"
        "_WSGRA0_WSGRB0_WS64_WG32_8_1"
    )
    other = tensile.replace("_NTA0_", "_NTA4_").replace("_NEPBS8_", "_NEPBS16_")
    assert abbreviate(tensile, 52) == abbreviate(other, 52)
    # THEN each keeps its head and tail and shows the field where it first differs
    assert abbreviate_apart([(tensile, 52), (other, 52)]) == [
        "Cijk_Alik_Blj…NTA0_NTB0_NTC0_NTD4_NTM0…WS64_WG32_8_1",
        "Cijk_Alik_Blj…NTA4_NTB0_NTC0_NTD4_NTM0…WS64_WG32_8_1",
    ]
    # AND names whose head or tail tells them apart keep the usual cut
    third = tensile.replace("WG32_8_1", "WG16_4_4")
    assert abbreviate_apart([(tensile, 52), (third, 52)]) == [
        abbreviate(tensile, 52),
        abbreviate(third, 52),
    ]


def test_a_nodes_devices_fit_one_line_grouped_by_name() -> None:
    # GIVEN the 8-GPU A100 trace HTA compares against, and vLLM's ROCm trace that names none
    from rich.console import Console

    from traceinspect import load
    from traceinspect.analysis.summary import summarize
    from traceinspect.report.summary import render_summary

    expected = {
        "HolisticTraceAnalysis__trace_diff__control.json.gz": "0–7: NVIDIA A100-PG509-200",
        "TraceLens__vllm_decode_full__graph_execution.json.gz": "0–7: names not recorded",
    }
    for name, devices in expected.items():
        summary = summarize(load(corpus_file(name)))
        assert len(summary.devices) == 8  # the JSON report keeps one entry per device
        console = Console(file=io.StringIO(), width=400)
        render_summary(summary, console, top=3)
        first = console.file.getvalue().splitlines()[0]  # type: ignore[attr-defined]
        # THEN the header names them once per run of ids, not eight times over
        assert first.endswith(f"devices: {devices}")


def test_device_groups_join_consecutive_ids_of_one_name_only() -> None:
    from traceinspect.report.layout import device_groups

    assert device_groups([(0, "NVIDIA H200")]) == ["0: NVIDIA H200"]
    assert device_groups([(0, "A"), (1, "A"), (2, "B"), (3, "B"), (5, "B"), (6, "")]) == [
        "0–1: A", "2–3: B", "5: B", "6: name not recorded"
    ]
    assert device_groups([(0, None), (1, None)]) == ["0–1: names not recorded"]
    assert device_groups([("x", "A"), ("y", "A")]) == ["x: A", "y: A"]  # ids not numbers
    assert device_groups([]) == []
