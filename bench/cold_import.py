#!/usr/bin/env python3.13
"""The fetcher's cold import from the built layers: what a Lambda cold start spends before the handler runs.

Builds both layers with their own Makefiles (the recipe `sam build` runs: pinned wheels, heed_core /
heed_aws, every module precompiled as unchecked-hash .pyc), for this machine's platform, so that the
native wheels load here (the bytecode is the same for arm64), then imports functions/fetcher/app.py
in fresh interpreters, each as Lambda does on a cold start: the layers on sys.path as /opt/python is,
nothing written back (/opt is read-only), the template's environment. The same layers without their
.pyc files are measured beside, for what precompiling saves.

    bench/cold_import.py                  # 7 runs each way, the figures
    bench/cold_import.py --check          # and fail unless every layer module came from an
                                          # unchecked-hash .pyc and the median is within --limit-ms
    bench/cold_import.py --layers DIR     # a `sam build` folder (DIR/CoreLayer, DIR/AwsLayer) instead
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"CoreLayer": ROOT / "layers" / "core", "AwsLayer": ROOT / "layers" / "aws"}
GOAL_MS = 400.0

# What runs in each fresh interpreter: the import, timed, then what it loaded from the layers.
_PROBE = r"""
import importlib.util, json, os, sys, time
layers = sys.argv[1:]
task = os.environ["HEED_TASK_ROOT"]
sys.path[:0] = [task] + layers  # as Lambda's bootstrap: the function's folder, then /opt/python
t0 = time.perf_counter()
spec = importlib.util.spec_from_file_location("app", task + "/app.py")
app = importlib.util.module_from_spec(spec)
spec.loader.exec_module(app)
ms = (time.perf_counter() - t0) * 1000
mods = []
for m in list(sys.modules.values()):
    origin = getattr(getattr(m, "__spec__", None), "origin", None) or ""
    if origin.endswith(".py") and any(origin.startswith(p) for p in layers):
        mods.append((origin, getattr(m.__spec__, "cached", None)))
print(json.dumps({"ms": ms, "modules": mods}))
"""


def host_arch() -> str:
    """This machine's architecture as manylinux wheels name it (x86_64 or aarch64)."""
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def build_layers(dest: Path) -> dict[str, Path]:
    """Both layers built by their Makefiles for this machine; {layer: its python/ folder}."""
    out = {}
    for name, src in LAYERS.items():
        target = dest / name
        subprocess.run(["make", "--no-print-directory", "-s", "-C", str(src), f"build-{name}",
                        f"ARTIFACTS_DIR={target}", f"ARCH={host_arch()}"], check=True,
                       env={**os.environ, "PIP_ROOT_USER_ACTION": "ignore"})
        out[name] = target / "python"
    return out


def without_bytecode(layers: dict[str, Path], dest: Path) -> dict[str, Path]:
    """A copy of the layers with every __pycache__ removed (what the layers shipped before)."""
    out = {}
    for name, path in layers.items():
        copy = dest / name / "python"
        shutil.copytree(path, copy, ignore=shutil.ignore_patterns("__pycache__"))
        out[name] = copy
    return out


def lambda_env(python_dirs: list[Path]) -> dict[str, str]:
    """The environment the template gives the fetcher, as a cold start sees it (no bytecode written)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
        "HEED_TASK_ROOT": str(ROOT / "functions" / "fetcher"),
        "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_LAMBDA_FUNCTION_NAME": "heed-FetcherFunction",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512", "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
        "POWERTOOLS_SERVICE_NAME": "heed", "POWERTOOLS_METRICS_NAMESPACE": "Heed/aubebot",
        "POWERTOOLS_LOG_LEVEL": "INFO", "HEED_BOT": "aubebot",
    }


def one_import(python: str, dirs: list[Path]) -> dict[str, Any]:
    # The base interpreter without site-packages (-S): only the layers and the standard library.
    proc = subprocess.run([python, "-S", "-c", _PROBE, *map(str, dirs)], capture_output=True, text=True,
                          env=lambda_env(dirs), timeout=120)
    if proc.returncode != 0:
        raise SystemExit(f"cold import failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def pyc_is_unchecked_hash(path: str | None) -> bool:
    """A .pyc whose header says hash-based and do not check the source (PEP 552 flags == 0b01)."""
    if not path or not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        header = f.read(8)
    return int.from_bytes(header[4:8], "little") == 1


def measure(python: str, dirs: list[Path], runs: int) -> tuple[list[float], dict[str, Any]]:
    one_import(python, dirs)  # warm the page cache: every run after it reads the same files
    results = [one_import(python, dirs) for _ in range(runs)]
    return [r["ms"] for r in results], results[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--layers", type=Path, help="a sam build folder holding CoreLayer/ and AwsLayer/")
    ap.add_argument("--check", action="store_true", help="exit 1 unless bytecode is used and the goal is met")
    ap.add_argument("--limit-ms", type=float, default=GOAL_MS)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    python = getattr(sys, "_base_executable", sys.executable)  # a venv's site-packages must not answer
    with tempfile.TemporaryDirectory(prefix="heed-cold-import-") as tmp:
        built = ({n: args.layers / n / "python" for n in LAYERS} if args.layers else build_layers(Path(tmp) / "built"))
        plain = without_bytecode(built, Path(tmp) / "plain")
        dirs = [built["CoreLayer"], built["AwsLayer"]]
        pre_ms, last = measure(python, dirs, args.runs)
        src_ms, _ = measure(python, [plain["CoreLayer"], plain["AwsLayer"]], args.runs)
        missing = [m for m, cached in last["modules"] if not pyc_is_unchecked_hash(cached)]
    figures = {
        "python": platform.python_version(), "machine": platform.machine(), "runs": args.runs,
        "precompiled_ms": {"median": statistics.median(pre_ms), "min": min(pre_ms), "max": max(pre_ms)},
        "source_only_ms": {"median": statistics.median(src_ms), "min": min(src_ms), "max": max(src_ms)},
        "layer_modules": len(last["modules"]), "without_unchecked_hash_pyc": len(missing), "goal_ms": GOAL_MS,
    }
    p, s = figures["precompiled_ms"], figures["source_only_ms"]
    print(f"fetcher cold import ({args.runs} runs, {figures['layer_modules']} modules from the layers, "
          f"CPython {figures['python']} {figures['machine']}):")
    print(f"  precompiled layers (as built): median {p['median']:.0f} ms (min {p['min']:.0f}, max {p['max']:.0f}); "
          f"goal <= {GOAL_MS:.0f} ms")
    print(f"  the same without .pyc:         median {s['median']:.0f} ms (min {s['min']:.0f}, max {s['max']:.0f})")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if args.check:
        if missing:
            print(f"cold-import: {len(missing)} layer modules without an unchecked-hash .pyc, e.g. {missing[0]}",
                  file=sys.stderr)
            return 1
        if p["median"] > args.limit_ms:
            print(f"cold-import: median {p['median']:.0f} ms is over {args.limit_ms:.0f} ms", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
