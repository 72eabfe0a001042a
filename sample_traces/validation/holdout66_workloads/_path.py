"""Puts ../workloads on the import path: the hold-out scripts share its harness and models."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workloads"))
