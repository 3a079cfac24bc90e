"""Build hook: a wheel carries what the local runtime reads from the checkout.

`heed local run` and `heed demo` build their stack from template.yaml and run the handlers in
functions/<name>/app.py. Those stay at the top of the checkout (the SAM deployment reads them
there); at build time this hook copies those very files into the package as heed/_stack/, so
an installed wheel has them and the copy cannot drift from the source of truth.
Everything else about the package is in pyproject.toml.
"""
from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
STACK_DIR = "heed/_stack"  # heed.local.root.ROOT looks here first


def stack_files() -> list[str]:
    """template.yaml, the bench's per-page figures (heed cost) and every function's app.py."""
    files = ["template.yaml", "bench/cost-inputs.json",
             *sorted(p.relative_to(HERE).as_posix() for p in HERE.glob("functions/*/app.py"))]
    missing = [f for f in files if not (HERE / f).is_file()]
    if missing or len(files) == 1:
        raise SystemExit(f"setup.py: cannot ship the local stack, missing: {missing or ['functions/*/app.py']}")
    return files


class BuildPyWithStack(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install runs from the checkout, which has the files themselves
        for name in stack_files():
            target = Path(self.build_lib) / STACK_DIR / name
            self.mkpath(str(target.parent))
            self.copy_file(str(HERE / name), str(target))


setup(cmdclass={"build_py": BuildPyWithStack})
