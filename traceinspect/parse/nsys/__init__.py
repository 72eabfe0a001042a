"""Nsight Systems reader: an ``nsys export --type sqlite`` database into a :class:`Timeline`.

Also accepted: a gzipped export and a ``.nsys-rep``/``.qdrep`` report (exported through the
``nsys`` binary on PATH into a per-user cache).

Modules, along the reader's seams:

- :mod:`~traceinspect.parse.nsys.export` — getting a readable export: gzip, the report cache;
- :mod:`~traceinspect.parse.nsys.schema` — which tables and columns one export has, SQL
  helpers (exports from nsys 2021.x to 2026.x differ);
- :mod:`~traceinspect.parse.nsys.reader` — GPU activities, API calls, syncs, metadata;
- :mod:`~traceinspect.parse.nsys.nvtx` — NVTX ranges: user regions, emit_nvtx operators,
  libraries' own domains (NCCL collectives are communication).
"""

from __future__ import annotations

from traceinspect.parse.nsys.export import EXPORT_HINT, cache_dir, export_report
from traceinspect.parse.nsys.reader import GRAPH_NODES_HIDDEN_NOTE, read_nsys

__all__ = ["EXPORT_HINT", "GRAPH_NODES_HIDDEN_NOTE", "cache_dir", "export_report", "read_nsys"]
