"""The sample workloads: each one step of a PyTorch program in a known performance regime.

A :class:`Workload` is a list of :class:`Segment` s run one after the other on a tuple of
tensors. Eager mode runs each segment inside its region; graphed mode captures every
capturable segment as its own CUDA graph (static inputs, replay contract) and runs the
host segments (the ones that synchronize) between the replays. Regions are marked with both
``torch.profiler.record_function`` and ``torch.cuda.nvtx.range`` so Kineto and Nsight
Systems see the same names.

``build(name, device, smoke)`` makes one workload; ``smoke=True`` gives tiny sizes so every
code path runs on a CPU in seconds.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

State = tuple[Tensor, ...]

NAMES = (
    "tiny_mlp",
    "decode_step",
    "convnet_b1",
    "convnet_b64",
    "big_gemm",
    "mixed",
    "two_streams",
    "host_sync",
)

#: Workloads recorded after the estimator was built, to check it on work it was not tuned on
#: (``sample_traces/holdout/``).
HOLDOUT = (
    "ln_gelu_mlp",
    "sdpa_encoder",
    "medium_gemms",
    "elementwise_4m",
    "convnet_b8",
)


@contextlib.contextmanager
def region(name: str) -> Iterator[None]:
    """One named range for both Kineto (record_function) and Nsight Systems (NVTX)."""
    with torch.profiler.record_function(name):
        if torch.cuda.is_available():
            torch.cuda.nvtx.range_push(name)
            try:
                yield
            finally:
                torch.cuda.nvtx.range_pop()
        else:
            yield


@dataclass
class Segment:
    """Part of a step. ``fn`` maps the state to the next state.

    A capturable segment becomes one CUDA graph in graphed mode. A host segment
    (``capturable=False``) reads values back to the host; it returns its input state
    unchanged to go on, or ``None`` to end the step early.
    """

    name: str | None
    fn: Callable[[State], State | None]
    capturable: bool = True


@dataclass
class Workload:
    name: str
    description: str
    segments: list[Segment]
    inputs: list[State]  # a few input sets, cycled through step after step
    modules: list[nn.Module] = field(default_factory=list)  # kept alive with the workload

    def eager_step(self, inputs: State) -> State:
        state = inputs
        for seg in self.segments:
            with region(seg.name) if seg.name else contextlib.nullcontext():
                out = seg.fn(state)
            if out is None:
                break
            state = out
        return state


# --------------------------------------------------------------------------------------
# tiny_mlp: launch-bound


def _tiny_mlp(device: torch.device, smoke: bool) -> Workload:
    layers, width, batch = (4, 16, 2) if smoke else (48, 64, 8)
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    net = nn.Sequential(*mods).to(device).eval()

    def fwd(s: State) -> State:
        return (net(s[0]),)

    return Workload(
        "tiny_mlp",
        f"{layers} x (Linear({width},{width}) + ReLU) at batch {batch}, fp32: "
        "hundreds of microsecond-scale kernels, launch-bound",
        [Segment(None, fwd)],
        [(torch.randn(batch, width, device=device),) for _ in range(4)],
        [net],
    )


# --------------------------------------------------------------------------------------
# decode_step: small-batch transformer decode with a static KV cache


class _DecodeLayer(nn.Module):
    def __init__(self, d: int, heads: int, batch: int, cache_len: int, dtype: torch.dtype):
        super().__init__()
        self.heads = heads
        self.dh = d // heads
        self.norm1 = nn.LayerNorm(d, dtype=dtype)
        self.qkv = nn.Linear(d, 3 * d, dtype=dtype)
        self.out = nn.Linear(d, d, dtype=dtype)
        self.norm2 = nn.LayerNorm(d, dtype=dtype)
        self.up = nn.Linear(d, 4 * d, dtype=dtype)
        self.down = nn.Linear(4 * d, d, dtype=dtype)
        shape = (batch, heads, cache_len, self.dh)
        self.register_buffer("k_cache", torch.randn(shape, dtype=dtype) * 0.1)
        self.register_buffer("v_cache", torch.randn(shape, dtype=dtype) * 0.1)
        self.register_buffer("positions", torch.arange(cache_len))

    def forward(self, x: Tensor, pos: Tensor) -> Tensor:
        b = x.shape[0]
        with region("attn"):
            h = self.norm1(x)
            q, k, v = self.qkv(h).view(b, 1, 3, self.heads, self.dh).unbind(2)
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (b, heads, 1, dh)
            # In-place cache write at a position held in a tensor: no host value, graph-safe.
            self.k_cache.index_copy_(2, pos, k)
            self.v_cache.index_copy_(2, pos, v)
            scores = (q @ self.k_cache.transpose(-1, -2)) / math.sqrt(self.dh)
            scores = scores.masked_fill(self.positions > pos, float("-inf"))
            att = torch.softmax(scores.float(), dim=-1).to(x.dtype) @ self.v_cache
            x = x + self.out(att.transpose(1, 2).reshape(b, 1, -1))
        with region("mlp"):
            x = x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))
        return x


def _decode_step(device: torch.device, smoke: bool) -> Workload:
    layers, d, heads, batch, cache_len = (2, 32, 2, 2, 16) if smoke else (8, 1024, 16, 4, 256)
    dtype = torch.float32 if device.type == "cpu" else torch.bfloat16
    blocks = nn.ModuleList(
        [_DecodeLayer(d, heads, batch, cache_len, dtype) for _ in range(layers)]
    ).to(device)
    blocks.eval()

    def fwd(s: State) -> State:
        x, pos = s
        for blk in blocks:
            x = blk(x, pos)
        return (x,)

    start = cache_len // 2
    inputs = [
        (
            torch.randn(batch, 1, d, device=device, dtype=dtype),
            torch.tensor([start + i], device=device),
        )
        for i in range(4)
    ]
    return Workload(
        "decode_step",
        f"transformer decode step: {layers} layers, d_model {d}, {heads} heads, batch {batch}, "
        f"static KV cache of {cache_len} written in place at a position tensor, "
        f"{str(dtype).removeprefix('torch.')}; regions attn/mlp per layer",
        [Segment(None, fwd)],
        inputs,
        [blocks],
    )


# --------------------------------------------------------------------------------------
# convnet: a ResNet-18 (torchvision's layout, written out to need no torchvision)


class _Basic(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.down: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: Tensor) -> Tensor:
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b2(self.c2(y)) + self.down(x))


def resnet18(width: int = 64, classes: int = 1000) -> nn.Module:
    w = [width, width * 2, width * 4, width * 8]
    stages: list[nn.Module] = []
    cin = w[0]
    for i, c in enumerate(w):
        stride = 1 if i == 0 else 2
        stages += [_Basic(cin, c, stride), _Basic(c, c, 1)]
        cin = c
    return nn.Sequential(
        nn.Conv2d(3, w[0], 7, 2, 3, bias=False),
        nn.BatchNorm2d(w[0]),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, 1),
        *stages,
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(cin, classes),
    )


def _convnet(name: str, device: torch.device, smoke: bool, batch: int, size: int) -> Workload:
    width = 64
    if smoke:
        width, size = 8, 32
    dtype = torch.float32 if device.type == "cpu" else torch.bfloat16
    net = resnet18(width).to(device=device, dtype=dtype, memory_format=torch.channels_last)
    net.eval()

    def fwd(s: State) -> State:
        return (net(s[0]),)

    inputs = [
        (
            torch.randn(batch, 3, size, size, device=device, dtype=dtype).contiguous(
                memory_format=torch.channels_last
            ),
        )
        for _ in range(2)
    ]
    return Workload(
        name,
        f"ResNet-18 (torchvision layout), eval, {str(dtype).removeprefix('torch.')}, "
        f"channels_last, batch {batch} at {size}x{size}",
        [Segment(None, fwd)],
        inputs,
        [net],
    )


# --------------------------------------------------------------------------------------
# big_gemm: compute-bound


def _big_gemm(device: torch.device, smoke: bool) -> Workload:
    n, count = (64, 3) if smoke else (8192, 12)
    dtype = torch.float32 if device.type == "cpu" else torch.bfloat16
    weights = [torch.randn(n, n, device=device, dtype=dtype) / math.sqrt(n) for _ in range(2)]

    def fwd(s: State) -> State:
        x = s[0]
        for i in range(count):
            x = x @ weights[i % 2]
        return (x,)

    return Workload(
        "big_gemm",
        f"{count} chained {n}x{n}x{n} {str(dtype).removeprefix('torch.')} matmuls: "
        "tens of ms of GPU per step, compute-bound",
        [Segment(None, fwd)],
        [(torch.randn(n, n, device=device, dtype=dtype) / math.sqrt(n),) for _ in range(2)],
    )


# --------------------------------------------------------------------------------------
# mixed: a launch-bound region and a compute-bound region in one step


def _mixed(device: torch.device, smoke: bool) -> Workload:
    heads, tokens, dh = (2, 4, 8) if smoke else (16, 32, 64)
    m, k = (16, 32) if smoke else (8192, 8192)
    dtype = torch.float32 if device.type == "cpu" else torch.bfloat16
    d = heads * dh
    w_in = torch.randn(d, k, device=device, dtype=dtype) / math.sqrt(d)
    w_up = torch.randn(k, k, device=device, dtype=dtype) / math.sqrt(k)
    w_down = torch.randn(k, d, device=device, dtype=dtype) / math.sqrt(k)
    big = torch.randn(m, d, device=device, dtype=dtype)

    def attention(s: State) -> State:
        x = s[0]  # (tokens, d)
        outs = []
        for h in range(heads):  # per-head small ops: many launches, little work each
            xh = x[:, h * dh : (h + 1) * dh]
            scores = (xh @ xh.t()) * (1.0 / math.sqrt(dh))
            outs.append(torch.softmax(scores, dim=-1) @ xh)
        return (torch.cat(outs, dim=1) + x,)

    def mlp(s: State) -> State:
        a = s[0]
        # Broadcast the small activations over a large batch: two big GEMMs dominate.
        h = torch.relu((big + a.mean(0)) @ w_in)
        h = torch.relu(h @ w_up)
        return (h @ w_down,)

    return Workload(
        "mixed",
        f"region attention: {heads} heads x per-head small ops on {tokens} tokens "
        f"(launch-bound); region mlp: {m}x{d}x{k}, {m}x{k}x{k}, {m}x{k}x{d} "
        f"{str(dtype).removeprefix('torch.')} GEMMs (compute-bound); graphed: one graph per "
        "region",
        [Segment("attention", attention), Segment("mlp", mlp)],
        [(torch.randn(tokens, d, device=device, dtype=dtype),) for _ in range(2)],
    )


# --------------------------------------------------------------------------------------
# two_streams: fork/join over two streams


def _two_streams(device: torch.device, smoke: bool) -> Workload:
    n, per_branch = (32, 2) if smoke else (2048, 8)
    dtype = torch.float32 if device.type == "cpu" else torch.bfloat16
    wa = torch.randn(n, n, device=device, dtype=dtype) / math.sqrt(n)
    wb = torch.randn(n, n, device=device, dtype=dtype) / math.sqrt(n)
    cuda = device.type == "cuda"
    side = [torch.cuda.Stream(device) for _ in range(2)] if cuda else []

    def branch(x: Tensor, w: Tensor, name: str) -> Tensor:
        with region(name):
            for _ in range(per_branch):
                x = torch.tanh(x @ w)
        return x

    def fwd(s: State) -> State:
        x = s[0]
        if not cuda:
            return (branch(x, wa, "branch_a") + branch(x, wb, "branch_b"),)
        main = torch.cuda.current_stream(device)
        for st in side:
            st.wait_stream(main)  # fork: an event recorded on main, waited on by each side
        with torch.cuda.stream(side[0]):
            a = branch(x, wa, "branch_a")
        with torch.cuda.stream(side[1]):
            b = branch(x, wb, "branch_b")
        for st in side:
            main.wait_stream(st)  # join
        if not torch.cuda.is_current_stream_capturing():
            # Allocated on the side streams, used on main: keep the allocator from reusing
            # them early (inside a capture the graph's private pool keeps them anyway).
            a.record_stream(main)
            b.record_stream(main)
        return (a + b,)

    return Workload(
        "two_streams",
        f"fork/join over two side streams with event waits; each branch {per_branch} x "
        f"({n}x{n}x{n} {str(dtype).removeprefix('torch.')} matmul + tanh)",
        [Segment(None, fwd)],
        [(torch.randn(n, n, device=device, dtype=dtype),) for _ in range(2)],
    )


# --------------------------------------------------------------------------------------
# host_sync: an .item() in the middle of the step


def _host_sync(device: torch.device, smoke: bool) -> Workload:
    width, depth, batch = (16, 2, 4) if smoke else (1024, 12, 64)
    dtype = torch.float32
    w = torch.randn(width, width, device=device, dtype=dtype) / math.sqrt(width)
    stop_threshold = 1e30  # never reached with these inputs: the check always says go on

    def prepare(s: State) -> State:
        x = s[0]
        for _ in range(depth):
            x = torch.tanh(x @ w)
        return (x, x.abs().amax())

    def check(s: State) -> State | None:
        # Data-dependent early stop: the host needs the value now (a device-to-host copy
        # and a stream synchronize), so this step cannot be captured whole.
        if s[1].item() > stop_threshold:
            return None
        return s

    def refine(s: State) -> State:
        x = s[0]
        for _ in range(depth):
            x = torch.tanh(x @ w) + x
        return (x,)

    return Workload(
        "host_sync",
        f"prepare ({depth} x {batch}x{width}x{width} fp32 matmul + tanh), then an .item() "
        "early-stop check that synchronizes, then refine (as many again); graphed: prepare "
        "and refine are captured as two graphs, split at the sync",
        [Segment("prepare", prepare), Segment("check", check, False), Segment("refine", refine)],
        [(torch.randn(batch, width, device=device, dtype=dtype),) for _ in range(2)],
    )


# --------------------------------------------------------------------------------------
# hold-out workloads


def _ln_gelu_mlp(device: torch.device, smoke: bool) -> Workload:
    layers, width, batch = (3, 32, 4) if smoke else (24, 512, 32)
    dtype = torch.float32 if device.type == "cpu" else torch.bfloat16
    net = (
        nn.Sequential(
            *(
                nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.GELU())
                for _ in range(layers)
            )
        )
        .to(device, dtype)
        .eval()
    )

    def fwd(s: State) -> State:
        return (net(s[0]),)

    return Workload(
        "ln_gelu_mlp",
        f"{layers} x (Linear({width}) + LayerNorm + GELU) at batch {batch}, "
        f"{str(dtype).removeprefix('torch.')}",
        [Segment(None, fwd)],
        [(torch.randn(batch, width, device=device, dtype=dtype),) for _ in range(4)],
        [net],
    )


def _sdpa_encoder(device: torch.device, smoke: bool) -> Workload:
    layers, batch, seq, d, heads = (2, 1, 8, 32, 2) if smoke else (6, 8, 512, 1024, 16)
    dtype = torch.float32 if device.type == "cpu" else torch.bfloat16
    net = (
        nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True),
            layers,
            enable_nested_tensor=False,
        )
        .to(device, dtype)
        .eval()
    )

    def fwd(s: State) -> State:
        return (net(s[0]),)

    return Workload(
        "sdpa_encoder",
        f"{layers}-layer transformer encoder (SDPA), batch {batch} x {seq} tokens, d {d}, "
        f"{str(dtype).removeprefix('torch.')}",
        [Segment(None, fwd)],
        [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)],
        [net],
    )


def _medium_gemms(device: torch.device, smoke: bool) -> Workload:
    n, count = (32, 4) if smoke else (1536, 40)
    dtype = torch.float32 if device.type == "cpu" else torch.bfloat16
    weights = [torch.randn(n, n, device=device, dtype=dtype) / math.sqrt(n) for _ in range(4)]

    def fwd(s: State) -> State:
        x = s[0]
        for i in range(count):
            x = x @ weights[i % 4]
        return (x,)

    return Workload(
        "medium_gemms",
        f"{count} chained {n}^3 {str(dtype).removeprefix('torch.')} matmuls (~10 µs each)",
        [Segment(None, fwd)],
        [(torch.randn(n, n, device=device, dtype=dtype) / math.sqrt(n),) for _ in range(2)],
    )


def _elementwise_4m(device: torch.device, smoke: bool) -> Workload:
    numel, count = (1024, 4) if smoke else (4 * 2**20, 30)

    def fwd(s: State) -> State:
        x = s[0]
        for i in range(count):
            x = torch.sin(x) * 0.5 + x if i % 2 else torch.tanh(x) + 0.1
        return (x,)

    return Workload(
        "elementwise_4m",
        f"{count} memory-bound elementwise steps on {numel:,} fp32 values",
        [Segment(None, fwd)],
        [(torch.randn(numel, device=device),) for _ in range(2)],
    )


def build(name: str, device: torch.device, smoke: bool = False) -> Workload:
    torch.manual_seed(0)
    with torch.no_grad():
        if name == "tiny_mlp":
            return _tiny_mlp(device, smoke)
        if name == "decode_step":
            return _decode_step(device, smoke)
        if name == "convnet_b1":
            return _convnet(name, device, smoke, 1, 224)
        if name == "convnet_b64":
            # 384 px: at 224 px the host's ~2.8 ms of launches still exceeds the GPU's ~1.8 ms
            return _convnet(name, device, smoke, 4 if smoke else 64, 384)
        if name == "big_gemm":
            return _big_gemm(device, smoke)
        if name == "mixed":
            return _mixed(device, smoke)
        if name == "two_streams":
            return _two_streams(device, smoke)
        if name == "host_sync":
            return _host_sync(device, smoke)
        if name == "ln_gelu_mlp":
            return _ln_gelu_mlp(device, smoke)
        if name == "sdpa_encoder":
            return _sdpa_encoder(device, smoke)
        if name == "medium_gemms":
            return _medium_gemms(device, smoke)
        if name == "elementwise_4m":
            return _elementwise_4m(device, smoke)
        if name == "convnet_b8":
            return _convnet(name, device, smoke, 2 if smoke else 8, 224)
    raise ValueError(f"unknown workload {name!r}; known: {', '.join(NAMES)}")
