"""The collector: runs a user's script under the PyTorch profiler (``traceinspect profile``)
and measures the callables it offers as CUDA graph candidates.

Modules that need torch import it inside their functions, so that ``import traceinspect``
(and the public API: :func:`traceinspect.region`, :func:`traceinspect.graph_candidate`)
stays cheap and works without torch.
"""
