"""Performance RNN (Oore, Simon, Dieleman, Eck and Simonyan, 2018: expressive piano performances
as a stream of MIDI-like events, modelled by a 3-layer LSTM) evaluating 64 performance segments of
64 events each, teacher-forced, as Magenta's ``performance_rnn`` evaluation job scores them
(sixty-second hold-out: one stream, fp32 with TF32 off for cuBLAS and cuDNN: the one-hot event
encoding, ``nn.LSTM(388, 512, num_layers 3)`` over the 64 events, whose three layers cuDNN
pipelines over streams of its own (layer l at event t beside layer l - 1 at event t + 1), some 550
to 650 small fp32 GEMM and cell kernels on the FP32 pipe; then the softmax layer's GEMM over 4,096
rows, the cross-entropy, the accuracy and the perplexity; some 2 to 3.5 ms of GPU time in all,
nearly all of it the recurrence). Laid out as Magenta's ``performance_rnn`` model (its
``performance_with_dynamics`` configuration: 388 event classes, 128 NOTE_ON, 128 NOTE_OFF, 100
TIME_SHIFT steps of 10 ms and 32 VELOCITY bins; ``OneHotEventSequenceEncoderDecoder``, so the
input at each step is the previous event one-hot; ``rnn_layer_sizes [512, 512, 512]``, dropout
off in evaluation) and ``events_rnn_graph``'s evaluation metrics (the mean softmax cross-entropy,
the event accuracy, the perplexity e^loss). The segments are the 64 events ending at a random
point in each performance (Magenta trains on longer ones). fp32 weights and activations with
``torch.backends.cuda.matmul.allow_tf32`` and ``torch.backends.cudnn.allow_tf32`` both off (set at
build; cuDNN's is on by torch's default), eval, no gradients, random weights (torch's defaults).
Inputs (two input sets), batch first: the events (64, 65) int64, uniform below 388 (the first 64
the inputs, the last 64 the labels). Returns the loss, the accuracy and the perplexity, each (),
fp32.

    traceinspect profile performance_rnn_3layer_lstm_eval_fp32_one_stream_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

EVENTS, LAYER_SIZE, LAYERS, STEPS = 388, 512, 3, 64


class PerformanceRNN(nn.Module):
    def __init__(self, classes: int, units: int) -> None:
        super().__init__()
        self.classes = classes
        self.lstm = nn.LSTM(classes, units, LAYERS, batch_first=True)
        self.logits = nn.Linear(units, classes)

    def forward(self, events: Tensor) -> Tensor:
        x = F.one_hot(events, self.classes).float()
        outputs, _ = self.lstm(x)
        return self.logits(outputs)


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, classes, units = (2, 6, 11, 16) if smoke else (64, STEPS, EVENTS, LAYER_SIZE)
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs (torch's default)
    torch.backends.cudnn.allow_tf32 = False  # and full fp32 cuDNN RNN math
    model = PerformanceRNN(classes, units).to(device).eval()

    @torch.no_grad()
    def step(events: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        inputs, labels = events[:, :-1], events[:, 1:]
        logits = model(inputs).reshape(-1, classes)
        labels = labels.reshape(-1)
        loss = F.cross_entropy(logits, labels)
        accuracy = (logits.argmax(dim=-1) == labels).float().mean()
        return loss, accuracy, torch.exp(loss)

    inputs = [(torch.randint(0, classes, (batch, steps + 1), device=device),) for _ in range(2)]
    description = (
        f"Performance RNN: one-hot {classes} events, {LAYERS}-layer LSTM {units} over {steps} "
        f"events + softmax, loss / accuracy / perplexity, fp32 TF32 off, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
