"""Paths to the snippet fixtures used across the core tests."""

from __future__ import annotations

from pathlib import Path

import pytest

SNIPPETS = Path(__file__).parent / "snippets"


@pytest.fixture
def snippets() -> Path:
    return SNIPPETS
