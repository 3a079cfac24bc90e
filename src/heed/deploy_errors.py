"""What `heed deploy` raises: a mistake in the command, the profile or the setup (exit 2), or a
broken promise (exit 1). Apart from ``heed.deploy`` so that its steps in other modules
(heed.deploy_egress) raise them without importing the command (issue 36)."""
from __future__ import annotations

from heed_core.errors import ConfigError, HeedError

__all__ = ["DeployError", "PromiseBroken"]


class DeployError(ConfigError):
    """A mistake in the command, the profile or the setup: one line, exit 2."""

    code = "deploy"


class PromiseBroken(HeedError):
    """The conformance gate said no, or SAM failed: exit 1, the rules named."""

    code = "promise_broken"
    exit_code = 1
