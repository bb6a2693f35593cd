"""Locate omni's data folders (tools/, prompts/, sandbox/).

An installed wheel carries them as omni/_data/<name>; a source checkout (editable install, or
running from the repo) has them beside the package.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def data_dir(name: str) -> Path:
    packaged = Path(str(resources.files("omni"))) / "_data" / name
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"omni data folder {name!r} is missing from the installation")
