"""Two RWKV-4 blocks (Peng et al., 2023) in "GPT mode" over 2 sequences of 64 tokens, d 512, the
WKV operator written as a Python loop over the positions (fifty-third hold-out: one stream of
some 2,400 tiny kernels, 18 a position over the (2, 512) fp32 state, 4 KB, between the layers'
few small GEMMs: launch-bound), after BlinkDL/RWKV-LM's ``RWKV-v4/src/model.py``
(``RWKV_TimeMix``, ``RWKV_ChannelMix``, ``Block``) with its ``WKV`` CUDA kernel
(``cuda/wkv_cuda.cu``'s forward) replaced by the same recurrence in PyTorch, as the repository's
simple inference code (``RWKV_in_150_lines.py``) writes it token by token. Each block on x (2,
64, 512), the first LayerNorm ``ln0`` before the first block: x = x + TimeMix(LayerNorm(x)), x =
x + ChannelMix(LayerNorm(x)). TimeMix: the token shift (``nn.ZeroPad2d((0, 0, 1, -1))``, the
previous token, zeros before the first), the three mixes x mu + shifted (1 - mu) for the key,
value and receptance, ``Linear(512, 512)`` each (no bias), sr = sigmoid(r); then the WKV in
fp32, as ``RUN_CUDA`` casts (w = -exp(``time_decay``), u = ``time_first``, k and v cast to
fp32): uk = u + k over the sequence, then for each position t, with the state (aa, bb, pp) (0,
0, -1e38 at the start): p = max(pp, uk_t), e1 = exp(pp - p), e2 = exp(uk_t - p), y_t = (e1 aa
+ e2 v_t) / (e1 bb + e2); ww = pp + w, p = max(ww, k_t), e1 = exp(ww - p), e2 = exp(k_t - p),
aa = e1 aa + e2 v_t, bb = e1 bb + e2, pp = p (the products-and-sums as ``torch.addcmul``); the
64 outputs stacked, cast back, times sr, and the output ``Linear(512, 512)``. ChannelMix: the
token shift, the key and receptance mixes, k = relu(``Linear(512, 2048)``)^2, ``Linear(2048,
512)`` of k times sigmoid(``Linear(512, 512)`` of the receptance mix). After the last block the
final LayerNorm ``ln_out``. Initialized as RWKV-4's ``RWKV_Init`` sets the time parameters
(``time_decay`` -5 + 8 (h / (d - 1))^(0.7 + 1.3 l / (L - 1)), ``time_first`` log 0.3 plus the
zigzag, the mixes (i / d)^(1 - l / L) and their variants). bf16 weights and activations on a
GPU (fp32 on a CPU), the WKV in fp32, eval mode, no gradients. Input: the token embeddings (2,
64, 512). Returns the normalised hidden states (2, 64, 512).

    traceinspect profile rwkv_time_mix_loop_b2.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS = 2


def wkv(w: Tensor, u: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """wkv_cuda.cu's forward as a loop over the positions: w and u (d,), k and v (b, t, d),
    all fp32. Returns y (b, t, d) fp32."""
    batch, seq, d = k.shape
    aa = k.new_zeros(batch, d)
    bb = k.new_zeros(batch, d)
    pp = torch.full_like(aa, -1e38)
    uk = u + k
    ys = []
    for t in range(seq):
        kk, vv, ww = k[:, t], v[:, t], uk[:, t]
        p = torch.maximum(pp, ww)
        e1, e2 = torch.exp(pp - p), torch.exp(ww - p)
        ys.append(torch.addcmul(e1 * aa, e2, vv) / torch.addcmul(e2, e1, bb))
        ww = pp + w
        p = torch.maximum(ww, kk)
        e1, e2 = torch.exp(ww - p), torch.exp(kk - p)
        aa = torch.addcmul(e1 * aa, e2, vv)
        bb = torch.addcmul(e2, e1, bb)
        pp = p
    return torch.stack(ys, dim=1)


def mix_ramp(d: int) -> Tensor:
    """RWKV_Init's x[0, 0, i] = i / d."""
    return (torch.arange(d, dtype=torch.float32) / d)[None, None]


class TimeMix(nn.Module):
    def __init__(self, d: int, layer: int, layers: int) -> None:
        super().__init__()
        ratio_0_to_1 = layer / (layers - 1)
        ratio_1_to_almost0 = 1.0 - layer / layers
        h = torch.arange(d, dtype=torch.float32)
        self.time_decay = nn.Parameter(-5 + 8 * (h / (d - 1)) ** (0.7 + 1.3 * ratio_0_to_1))
        zigzag = torch.tensor([(i + 1) % 3 - 1 for i in range(d)], dtype=torch.float32) * 0.5
        self.time_first = nn.Parameter(torch.ones(d) * math.log(0.3) + zigzag)
        x = mix_ramp(d)
        self.time_mix_k = nn.Parameter(x**ratio_1_to_almost0)
        self.time_mix_v = nn.Parameter(x**ratio_1_to_almost0 + 0.3 * ratio_0_to_1)
        self.time_mix_r = nn.Parameter(x ** (0.5 * ratio_1_to_almost0))
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.key, self.value, self.receptance, self.output = (
            nn.Linear(d, d, bias=False) for _ in range(4)
        )

    def forward(self, x: Tensor) -> Tensor:  # x: (b, t, d)
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xv = x * self.time_mix_v + xx * (1 - self.time_mix_v)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
        k, v = self.key(xk), self.value(xv)
        sr = torch.sigmoid(self.receptance(xr))
        w = -torch.exp(self.time_decay.float())
        y = wkv(w, self.time_first.float(), k.float(), v.float()).to(x.dtype)
        return self.output(sr * y)


class ChannelMix(nn.Module):
    def __init__(self, d: int, layer: int, layers: int) -> None:
        super().__init__()
        ratio_1_to_almost0 = 1.0 - layer / layers
        x = mix_ramp(d)
        self.time_mix_k = nn.Parameter(x**ratio_1_to_almost0)
        self.time_mix_r = nn.Parameter(x**ratio_1_to_almost0)
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.key = nn.Linear(d, 4 * d, bias=False)
        self.receptance = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(4 * d, d, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
        k = torch.square(torch.relu(self.key(xk)))
        return torch.sigmoid(self.receptance(xr)) * self.value(k)


class Block(nn.Module):
    def __init__(self, d: int, layer: int, layers: int) -> None:
        super().__init__()
        self.ln0 = nn.LayerNorm(d) if layer == 0 else None
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.att = TimeMix(d, layer, layers)
        self.ffn = ChannelMix(d, layer, layers)

    def forward(self, x: Tensor) -> Tensor:
        if self.ln0 is not None:
            x = self.ln0(x)
        x = x + self.att(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class RWKV(nn.Module):
    def __init__(self, d: int, layers: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(Block(d, i, layers) for i in range(layers)))
        self.ln_out = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        return self.ln_out(self.blocks(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d = (2, 8, 16) if smoke else (2, 64, 512)
    dtype = low_precision(device)
    model = RWKV(d, LAYERS).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"RWKV-4 GPT mode, WKV as a Python loop: {LAYERS} blocks x {seq} positions, d{d} "
        f"(fp32 aa/bb/pp state), channel mix {4 * d}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
