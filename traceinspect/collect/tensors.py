"""The tensors a graph candidate is called with and returns: batch size and resizing along
the batch dimension, new inputs for replay (rotated rows), and the comparison of replayed
outputs with eager ones. torch is passed in by the caller (imported lazily there).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

#: (rtol, atol) per output dtype: torch.testing.assert_close's defaults. Other dtypes
#: (integers, bool) must match exactly.
TOLERANCES: Final[Mapping[str, tuple[float, float]]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "complex128": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
}


def batch_size(inputs: Sequence[Any], dim: int) -> int | None:
    for x in inputs:
        shape = getattr(x, "shape", None)
        if shape is not None and len(shape) > dim:
            return int(shape[dim])
    return None


def memory_format(x: Any, torch: Any) -> Any:
    """The memory format ``x`` is dense in: channels-last (4-D) or channels-last-3d (5-D)
    where it is laid out so and not also plain contiguous, else contiguous."""
    for rank, fmt in ((4, torch.channels_last), (5, torch.channels_last_3d)):
        if x.dim() == rank and x.is_contiguous(memory_format=fmt) and not x.is_contiguous():
            return fmt
    return torch.contiguous_format


def batch_major(x: Any, dim: int, torch: Any, batch: int | None = None) -> bool:
    """Whether ``x`` is a tensor with a batch dimension ``dim``: it has that dimension, of
    the batch's length (``batch``, where given). Another length there means the dimension is
    not its batch, and its rows may mean different things (see :func:`rotate`)."""
    return (
        isinstance(x, torch.Tensor) and x.dim() > dim and (batch is None or x.shape[dim] == batch)
    )


def resize(x: Any, size: int, dim: int, torch: Any, batch: int | None = None) -> Any:
    """``x`` with ``size`` rows along ``dim``, repeating its rows in order, in ``x``'s memory
    format (a channels-last input stays channels-last: the step must run as it would on
    ``x``). A tensor that is not batch-major (:func:`batch_major`, ``batch`` the example's)
    is passed as it is."""
    if not batch_major(x, dim, torch, batch) or x.shape[dim] == size:
        return x
    index = torch.arange(size, device=x.device) % x.shape[dim]
    return x.index_select(dim, index).contiguous(memory_format=memory_format(x, torch))


def rotate(x: Any, dim: int, torch: Any, batch: int | None = None) -> Any:
    """``x`` with its rows along ``dim`` rolled by one (new values for the same step), in
    ``x``'s memory format. A tensor whose length along ``dim`` is not the batch's (``batch``,
    where given) is passed as it is: that dimension is not its batch, and its rows may mean
    different things — rolling a heterogeneous graph's (2, E) edge list swapped its source
    and destination rows, indices into tables of other sizes, and the step's gather failed
    with a device-side assert that left the process's CUDA context unusable
    (``holdout56``'s GraphSAGE step, both recordings)."""
    if not batch_major(x, dim, torch, batch):
        return x
    return torch.roll(x, 1, dim).contiguous(memory_format=memory_format(x, torch))


def tensors(value: Any, torch: Any) -> Iterator[Any]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, tuple | list):
        for item in value:
            yield from tensors(item, torch)
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from tensors(value[key], torch)


def clone_tensors(value: Any, torch: Any) -> list[Any]:
    return [t.detach().clone() for t in tensors(value, torch)]


def compare_outputs(
    expected: list[Any], graph_output: Any, torch: Any
) -> tuple[bool | None, float | None, str | None]:
    """(all outputs within tolerance, largest absolute error, the tolerance used)."""
    actual = list(tensors(graph_output, torch))
    if not expected or len(actual) != len(expected):
        return (None if not expected and not actual else False), None, None
    correct = True
    max_error = 0.0
    tolerances = []
    for want, got in zip(expected, actual, strict=True):
        if want.shape != got.shape or want.dtype != got.dtype:
            return False, None, None
        dtype = str(want.dtype).removeprefix("torch.")
        if dtype in TOLERANCES:
            rtol, atol = TOLERANCES[dtype]
            ok = bool(torch.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))
            tolerances.append(f"{dtype} rtol={rtol:g} atol={atol:g}")
        else:
            ok = bool(torch.equal(got, want))
            tolerances.append(f"{dtype} exact")
        if want.numel():
            diff = (
                (got.double() - want.double()).abs().max()
                if want.is_floating_point() or want.is_complex()
                else (got.long() - want.long()).abs().max()
            )
            max_error = max(max_error, float(diff))
        correct = correct and ok
    return correct, max_error, "; ".join(sorted(set(tolerances)))
