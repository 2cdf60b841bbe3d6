"""A package's public names, each loaded from its module on first use: `import abeq.models` (or
`abeq.sets`, `abeq.documents`) then costs the package's `__init__` alone, and a command that needs one
loader does not load the rest (`abeq --version`, the gate's nothing-changed path: bench/bench_startup.py)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The module-level `__getattr__` of `package`: `names` maps a public name to the submodule
    (relative to the package) that defines it."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
