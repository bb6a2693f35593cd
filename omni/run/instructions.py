"""Project instructions: AGENTS.md from the repo root down to the working directory (nearest last);
CLAUDE.md or CONVENTIONS.md where a folder has no AGENTS.md. Capped in size. Read without following a link:
an AGENTS.md that points at ~/.ssh/id_rsa would send the key to the model."""

from __future__ import annotations

from pathlib import Path

from omni import safefs

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
        where = folder.relative_to(root)
        found = next(((where / n, raw) for n in NAMES
                      if (raw := safefs.read_optional(root, where / n, limit=4 * MAX_CHARS)) is not None), None)
        if found is None or budget <= 0:
            continue
        text = found[1].decode("utf-8", "replace").strip()
        rel = found[0].as_posix()
        if len(text) > budget:
            text = text[:budget] + f"\n[{rel} cut at {MAX_CHARS} characters in all]"
        budget -= len(text)
        parts.append(f"From {rel}:\n{text}")
        used.append(rel)
    return "\n\n".join(parts), used
