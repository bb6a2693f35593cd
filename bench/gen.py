"""Generators for benchmark inputs (deterministic)."""

from __future__ import annotations

from pathlib import Path


def python_module(lines: int = 5000) -> str:
    """A realistic module of about `lines` lines: classes with methods, functions, comments."""
    out = ['"""Generated module for benchmarks."""', "", "import os", ""]
    n = 0
    while len(out) < lines:
        out += ["", f"class Service{n}:", f'    """Service number {n}."""', ""]
        for m in range(6):
            out += [f"    def method_{m}(self, value, *, flag=False):", f"        # step {m}",
                    f"        total = value + {m}", "        if flag:", "            total *= 2",
                    "        return total", ""]
        out += ["", f"def helper_{n}(items):", "    return [i * 2 for i in items if i]", ""]
        n += 1
    return "\n".join(out[:lines]) + "\n"


def many_files(root: Path, count: int = 50_000) -> None:
    """`count` small source files in nested folders; one line in 1% of them says NEEDLE."""
    for n in range(count):
        folder = root / f"pkg{n % 50}" / f"sub{n % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        body = f"def f{n}(x):\n    return x + {n}\n"
        if n % 100 == 0:
            body += f"# NEEDLE {n}\n"
        (folder / f"mod{n}.py").write_text(body)
