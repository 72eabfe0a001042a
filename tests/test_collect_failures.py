"""Capture-failure classification on the texts CUDA and PyTorch actually raise."""

from __future__ import annotations

import pytest

from traceinspect.collect.failures import (
    classify_capture_failure,
    classify_exception,
    first_error,
)

NOT_PERMITTED = (
    "CUDA error: operation not permitted when stream is capturing\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\nFor debugging consider passing "
    "CUDA_LAUNCH_BLOCKING=1"
)


@pytest.mark.parametrize(
    ("error_type", "message", "lines", "kind"),
    [
        # CUDA error 900 is ambiguous: the user's line decides.
        (
            "RuntimeError",
            NOT_PERMITTED,
            ["out = fn(*static)", "n = int(x.sum().item())"],
            "host_sync",
        ),
        ("AcceleratorError", NOT_PERMITTED, ["if (x > 0).any():"], "host_sync"),
        ("RuntimeError", NOT_PERMITTED, ["idx = torch.nonzero(mask)"], "dynamic_shape"),
        ("RuntimeError", NOT_PERMITTED, ["vals = x.unique()"], "dynamic_shape"),
        ("RuntimeError", NOT_PERMITTED, ["return x[x > 0].sum()"], "dynamic_shape"),
        ("RuntimeError", NOT_PERMITTED, ["y = ext.fused_op(x)"], "unsupported_op"),
        ("RuntimeError", NOT_PERMITTED, [], "unsupported_op"),
        # Messages that say it themselves.
        (
            "RuntimeError",
            "Cannot copy between CPU and CUDA tensors during CUDA graph capture "
            "unless the CPU tensor is pinned.",
            [],
            "host_sync",
        ),
        (
            "RuntimeError",
            "CUDA error: operation would make the legacy stream depend on a "
            "capturing blocking stream",
            [],
            "host_sync",
        ),
        (
            "OutOfMemoryError",
            "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of 139.81 GiB",
            [],
            "out_of_memory",
        ),
        (
            "RuntimeError",
            "Cannot call CUDAGeneratorImpl::current_seed during CUDA graph "
            "capture. If you need this call to be captured, please file an issue.",
            [],
            "rng",
        ),
        ("RuntimeError", "CUDA error: capturing stream has unjoined work", [], "multi_stream"),
        (
            "RuntimeError",
            "CUDA error: operation failed due to a previous error during capture",
            [],
            "invalidated",
        ),
        ("ValueError", "too many values to unpack (expected 2)", ["a, b = out"], "other"),
    ],
)
def test_classify_capture_failure(
    error_type: str, message: str, lines: list[str], kind: str
) -> None:
    assert classify_capture_failure(error_type, message, lines).kind == kind


def test_message_is_the_first_line_only() -> None:
    failure = classify_capture_failure("RuntimeError", NOT_PERMITTED, ["v = t.item()"])
    assert failure.message == "CUDA error: operation not permitted when stream is capturing"
    assert failure.error_type == "RuntimeError"
    assert ".item()" in failure.hint
    assert failure.to_json()["kind"] == "host_sync"


def test_long_message_is_trimmed() -> None:
    failure = classify_capture_failure("RuntimeError", "x" * 1000)
    assert len(failure.message) == 400
    assert failure.message.endswith("…")


class _FakeTensor:
    def item(self) -> float:
        raise RuntimeError(NOT_PERMITTED)


def _captured_step(t: _FakeTensor) -> float:
    return t.item() * 2


def test_classify_exception_uses_the_first_error_and_its_traceback() -> None:
    # GIVEN the usual pair: the offending call raises, then ending the capture raises again
    try:
        try:
            _captured_step(_FakeTensor())
        except RuntimeError:
            # torch raises this one inside the handling of the first (implicit __context__)
            raise RuntimeError(  # noqa: B904
                "CUDA error: operation failed due to a previous error during capture"
            )
    except RuntimeError as exc:
        caught = exc
    # THEN the first error and its `.item()` line decide the kind
    assert first_error(caught) is caught.__context__
    failure = classify_exception(caught)
    assert failure.kind == "host_sync"
    assert failure.message == "CUDA error: operation not permitted when stream is capturing"


def test_first_error_of_a_single_exception_is_itself() -> None:
    exc = ValueError("alone")
    assert first_error(exc) is exc
