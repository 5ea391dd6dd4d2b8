"""Sandbox limits from the library's own environment variables are checked like the CLI's."""

from __future__ import annotations

import pytest

from guardrail.errors import InputError
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.limits import SandboxLimits


@pytest.mark.parametrize("value", ["1e10", "nan", "inf", "-1", "0", "abc"])
def test_a_bad_guardrail_timeout_is_an_input_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("GUARDRAIL_TIMEOUT", value)
    with pytest.raises(InputError, match=r"\$GUARDRAIL_TIMEOUT"):
        DockerSandbox(image="unused")


@pytest.mark.parametrize("value", ["0", "-3", "100000", "2.5"])
def test_a_bad_guardrail_pool_size_is_an_input_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("GUARDRAIL_POOL_SIZE", value)
    with pytest.raises(InputError, match=r"\$GUARDRAIL_POOL_SIZE"):
        DockerSandbox(image="unused")


def test_the_largest_timeout_is_accepted_and_one_more_second_is_not() -> None:
    assert SandboxLimits(timeout_s=3600).timeout_s == 3600
    with pytest.raises(InputError, match="at most 3600"):
        SandboxLimits(timeout_s=3601)
