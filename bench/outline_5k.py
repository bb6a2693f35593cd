"""Outline of a 5,000-line module: omni's outline tool against the libcst PositionProvider approach,
in the same run. Target: <= 300 ms median for ours.

Run: python bench/outline_5k.py [--lines 5000] [--repeat 9]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from common import ROOT, report, timed
from gen import python_module


class _Positions(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self):
        self.rows = []

    def visit_FunctionDef(self, node):
        pos = self.get_metadata(PositionProvider, node)
        self.rows.append((node.name.value, pos.start.line, pos.end.line))

    visit_ClassDef = visit_FunctionDef


def libcst_outline(text: str) -> list:
    visitor = _Positions()
    MetadataWrapper(cst.parse_module(text)).visit(visitor)
    return visitor.rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=9)
    opts = parser.parse_args()
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from context import Context
    from python_tools import outline

    text = python_module(opts.lines)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "big.py").write_text(text)
        ctx = Context(root=root)
        result = outline(ctx, "big.py")
        assert result["success"] and result["details"]["definitions"] == len(libcst_outline(text)) > 700
        ours = timed(lambda: outline(ctx, "big.py"), opts.repeat)
        base = timed(lambda: libcst_outline(text), max(3, opts.repeat // 3))
    report(f"Outline of a {opts.lines}-line module", "omni outline (ast, with line ranges)", ours,
           "libcst parse + PositionProvider", base, "<= 300 ms")


if __name__ == "__main__":
    main()
