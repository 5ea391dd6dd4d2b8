"""Execution sandboxes. `DockerSandbox` is the only module that imports ``docker``."""

from guardrail.sandbox.base import Job, Sandbox

__all__ = ["Job", "Sandbox"]
