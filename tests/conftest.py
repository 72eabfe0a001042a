"""Shared fixtures: the real-trace corpus beside the checkout and the project's own samples."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
SAMPLES = ROOT / "sample_traces"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """``../shared/corpus``; tests using it skip where it is absent (e.g. a bare clone)."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS} (it lies in ../shared beside the checkout)")
    return CORPUS


def corpus_file(name: str) -> Path:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} not found under {CORPUS}")
    return path


def sample_file(name: str) -> Path:
    path = SAMPLES / name
    if not path.is_file():
        pytest.fail(f"bundled sample {name} is missing from {SAMPLES}")
    return path
