"""Where the stack's own files are (template.yaml, functions/<name>/app.py), for every part of the
local runtime that builds the stack from them."""
from __future__ import annotations

from pathlib import Path

__all__ = ["ROOT"]


def _stack_root() -> Path:
    """Where template.yaml and functions/<name>/app.py are: the copy an installed wheel carries
    (setup.py puts it in heed/_stack at build time), else the checkout this file lives in."""
    here = Path(__file__).resolve()
    packaged = here.parents[1] / "_stack"
    return packaged if (packaged / "template.yaml").is_file() else here.parents[3]


ROOT = _stack_root()
