"""Project instructions: AGENTS.md from the repo root down to the working directory (nearest last);
CLAUDE.md or CONVENTIONS.md where a folder has no AGENTS.md. Capped in size."""

from __future__ import annotations

from pathlib import Path

NAMES = ("AGENTS.md", "CLAUDE.md", "CONVENTIONS.md")
MAX_CHARS = 8000


def load(repo_root: Path, cwd: Path) -> tuple[str, list[str]]:
    root, here = repo_root.resolve(), cwd.resolve()
    folders = [root]
    if here != root and root in here.parents:
        rel = here.relative_to(root)
        folders += [root.joinpath(*rel.parts[: n + 1]) for n in range(len(rel.parts))]
    parts, used, budget = [], [], MAX_CHARS
    for folder in folders:
        found = next((folder / n for n in NAMES if (folder / n).is_file()), None)
        if found is None or budget <= 0:
            continue
        text = found.read_text(errors="replace").strip()
        rel = found.relative_to(root).as_posix()
        if len(text) > budget:
            text = text[:budget] + f"\n[{rel} cut at {MAX_CHARS} characters in all]"
        budget -= len(text)
        parts.append(f"From {rel}:\n{text}")
        used.append(rel)
    return "\n\n".join(parts), used
