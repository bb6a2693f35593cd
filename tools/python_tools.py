"""Python-aware tools: outline and read_symbol (ast, for speed), and replace_symbol, delete_symbol, add_import on
libcst's concrete syntax tree, so formatting and comments outside the changed definition stay byte
for byte as they were."""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

import libcst as cst
from context import Context, result
from edits import as_meant, gated_write, parses
from files import all_files, numbered
from margins import strings_kept
from pyadd import added_to_class, defines
from pysource import definitions, is_named, parameters, values
from qualnames import AtQualname
from values import named, replace_value, values_read
from workspace import ToolError, not_utf8, read_text, resolve

Definition = (cst.FunctionDef, cst.ClassDef)


def _parse(text: str, path: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise ToolError(f"{path} does not parse as Python (line {exc.raw_line}): {exc.message}. "
                        "Fix it with replace_in_file first.") from exc


def _python_file(ctx: Context, path: str):
    file = resolve(ctx.root, path)
    if file.suffix not in (".py", ".pyi"):
        raise ToolError(f"{path} is not a Python file; use read_file, search and replace_in_file for it")
    text = read_text(file, path)
    where = not_utf8(text)
    if where:
        raise ToolError(f"{path} is not valid UTF-8 ({where}), so it cannot be edited as Python syntax; nothing "
                        "was written. Use replace_in_file, which keeps every byte it does not change.")
    return file, text


def _definitions(module: cst.Module) -> list[tuple[str, str, int, int, int]]:
    return definitions(module.code, "<module>")


def outline(ctx: Context, path: str) -> dict:
    target = resolve(ctx.root, path, kind="any")
    files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
    if target.is_file() and target.suffix not in (".py", ".pyi"):
        raise ToolError(f"{path} is not a Python file; outline reads Python only (use search for others)")
    parts, skipped, count = [], [], 0
    for file in files[:200]:
        rel = file.relative_to(ctx.root).as_posix()
        if any(p in (".git", ".venv", "venv", "node_modules") for p in file.parts):
            continue
        try:
            rows = definitions(read_text(file, rel), rel)
        except ToolError as exc:
            if not target.is_dir():
                raise  # the one file asked for: its error is the answer
            skipped.append(f"{rel}: {exc}")
            continue
        count += len(rows)
        lines = [f"{'    ' * depth}{kind} {name}  [{start}-{end}]" for kind, name, start, end, depth in rows]
        parts.append(f"{rel}\n" + ("\n".join(lines) if lines else "    (no classes or functions)"))
    text = "\n".join(parts) or "(no Python files)"
    if len(files) > 200:
        text += f"\n[{len(files) - 200} more files not shown; outline a subdirectory]"
    if skipped:
        text += "\nNot parsed:\n" + "\n".join(skipped)
    return result(True, text, files=len(parts), definitions=count)


SYMBOL_LINES = 120  # longer definitions show their first lines (functions) or their members (classes)
SYMBOL_MATCHES = 3
MAX_LISTED = 20  # definitions listed in the details


def _python_files(ctx: Context, path: str) -> list[Path]:
    target = resolve(ctx.root, path, kind="any")
    if target.is_file():
        if target.suffix not in (".py", ".pyi"):
            raise ToolError(f"{path} is not a Python file; use search for other files")
        return [target]
    return [ctx.root / rel for rel in all_files(ctx, path) if rel.endswith((".py", ".pyi"))]


def _find_definitions(ctx: Context, symbol: str, path: str) -> list[tuple]:
    """Every def or class under path named symbol (or ending in .symbol): (file, kind, qualname, start,
    end, lines, rows), the exact name first, then code before tests."""
    last = symbol.rsplit(".", 1)[-1]
    matches = []
    for file in _python_files(ctx, path):
        rel = file.relative_to(ctx.root).as_posix()
        text = read_text(file, rel)
        if last not in text:
            continue
        try:
            rows = definitions(text, rel)
        except ToolError:
            continue
        wanted = symbol if any(is_named(name, symbol) for _, name, *_ in rows) else in_module(symbol, rel)
        for kind, name, start, end, _depth in rows:
            if is_named(name, wanted):
                matches.append((rel, kind, name, start, end, text.splitlines(), rows))
    # "parse" means the module's parse, not Parser.parse.
    matches.sort(key=lambda m: (m[2] != symbol, "test" in m[0].lower(), m[0], m[3]))
    return matches


def in_module(symbol: str, rel: str) -> str:
    """A symbol written as an import path (jmespath.functions._func_reverse, parse.parse) names the
    definition inside the module at rel: the module's dotted path, or its tail, comes off the front."""
    parts = rel.removesuffix(".py").removesuffix(".pyi").removesuffix("/__init__").split("/")
    for start in range(len(parts)):
        prefix = ".".join(parts[start:]) + "."
        if symbol.startswith(prefix) and len(symbol) > len(prefix):
            return symbol[len(prefix):]
    return symbol


def _symbol_name(symbol: str) -> str:
    symbol = symbol.strip().removesuffix("()")
    head, colon, tail = symbol.rpartition(":")
    if colon and head.rstrip(":").endswith(".py"):  # parse.py:int_convert, as locations read: the name is the tail
        symbol = tail.strip()
    if not symbol.replace(".", "").replace("_", "").isalnum():
        raise ToolError(f"{symbol!r} is not a Python name; give a name such as 'parse' or 'Parser.parse'")
    return symbol


def _find_values(ctx: Context, symbol: str, path: str) -> list[tuple]:
    """Every value (pysource.values: a module's or a class's one plain assignment) under path named symbol, as
    _find_definitions gives definitions: read_symbol's answer when no def or class has the name."""
    last, matches = symbol.rsplit(".", 1)[-1], []
    for file in _python_files(ctx, path):
        rel = file.relative_to(ctx.root).as_posix()
        text = read_text(file, rel)
        if last in text:
            matches += [(rel, kind, name, start, end, text.splitlines(), []) for kind, name, start, end, _ in
                        values(text) if is_named(name, symbol) or is_named(name, in_module(symbol, rel))]
    matches.sort(key=lambda m: ("test" in m[0].lower(), m[0], m[3]))
    return matches


def read_symbol(ctx: Context, symbol: str, path: str = ".") -> dict:
    symbol = _symbol_name(symbol)
    matches = _find_definitions(ctx, symbol, path) or _find_values(ctx, symbol, path)
    if not matches and (file := resolve(ctx.root, path, kind="any")).is_file() and file.suffix in (".py", ".pyi"):
        definitions(read_text(file, path), path)  # a module that cannot be parsed says so, not "no def named"
    if not matches:
        raise ToolError(f"no def, class or assigned value named {symbol!r} under {path}. Use search to find where "
                        "it is mentioned, or outline to list a file's definitions.")
    blocks = []
    for rel, kind, name, start, end, lines, rows in matches[:SYMBOL_MATCHES]:
        head = f"{rel} lines {start}-{end}: {kind} {name}"
        if end - start < SYMBOL_LINES:
            blocks.append(f"{head}\n{numbered(lines, start, end)}")
        elif kind == "class":
            called = parameters("\n".join(lines))  # the file parsed already: definitions read it
            members = [f"    {k} {n}{called.get(a, '')}  [{a}-{b}]"
                       for k, n, a, b, _ in rows if n.startswith(name + ".") and n.count(".") == name.count(".") + 1]
            blocks.append(f"{head} (long; its first lines, then its members: read one with read_symbol "
                          f"'{name}.<member>')\n{numbered(lines, start, start + 14)}\n" + "\n".join(members))
        else:
            blocks.append(f"{head}\n{numbered(lines, start, start + SYMBOL_LINES - 1)}\n[lines "
                          f"{start + SYMBOL_LINES}-{end} not shown; read on with read_file start_line="
                          f"{start + SYMBOL_LINES}]")
    if len(matches) > SYMBOL_MATCHES:
        blocks.append("Also defined at: " + ", ".join(f"{m[0]}:{m[3]} {m[2]}" for m in matches[SYMBOL_MATCHES:][:10]))
    found = [{"path": m[0], "kind": m[1], "name": m[2], "start": m[3], "end": m[4]} for m in matches[:MAX_LISTED]]
    rel, kind, name, start, end, lines, _ = matches[0]
    reads = values_read("\n".join(lines), rel, name, start, end) if kind != "value" else []
    shown = start + (15 if kind == "class" else SYMBOL_LINES)  # the first line a long definition leaves out
    read_on = {"path": rel, "kind": kind, "name": name, "start": shown, "end": end} if end - start >= SYMBOL_LINES \
        else None
    return result(True, "\n\n".join(blocks), matches=len(matches), definitions=found, reads=reads, read_on=read_on,
                  locations=[f"{m[0]}:{m[3]}-{m[4]}" for m in matches], blocks=blocks,
                  sources=["\n".join(m[5][m[3] - 1:m[4]]) for m in matches[:SYMBOL_MATCHES]])


class _Replace(AtQualname):
    def __init__(self, qualname: str, new: list[cst.BaseStatement] | None):
        super().__init__()
        self.qualname, self.new, self.hits = qualname, new, 0

    def at(self, qualname: str, original, updated):
        if qualname != self.qualname:
            return updated
        self.hits += 1
        if self.new is None:
            return cst.RemoveFromParent()
        first = self.new[0]
        if isinstance(first, Definition) and first.name.value == original.name.value:  # a rewrite of this one
            if not first.decorators and original.decorators:  # models leave the decorators out
                first = first.with_changes(decorators=original.decorators)
            if type(first) is type(original):
                first = _keep_docstring(original, first)
            if isinstance(first, cst.ClassDef) and isinstance(original, cst.ClassDef):
                first = _keep_left_out_members(original, first)
        if not first.leading_lines and original.leading_lines:
            first = first.with_changes(leading_lines=original.leading_lines)  # keep comments above
        return cst.FlattenSentinel([first, *self.new[1:]])


def _names(statement: cst.BaseStatement) -> set[str]:
    """The names a class-body statement defines: a def or class, or plain assignment targets."""
    if isinstance(statement, Definition):
        return {statement.name.value}
    found = set()
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                [small.target] if isinstance(small, cst.AnnAssign) else []
            found |= {t.value for t in targets if isinstance(t, cst.Name)}
    return found


def _docstring(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString))


def _keep_docstring(original: cst.FunctionDef | cst.ClassDef, new: cst.FunctionDef | cst.ClassDef):
    """A function or class rewritten without its docstring keeps the old one. Small models copy a long
    docstring over and over until the reply is cut off (wcwidth's wcswidth); leaving it out must cost nothing."""
    if not isinstance(original.body, cst.IndentedBlock) or not isinstance(new.body, cst.IndentedBlock):
        return new
    old_body, new_body = original.body.body, new.body.body
    if not old_body or not _docstring(old_body[0]) or (new_body and _docstring(new_body[0])):
        return new
    return new.with_changes(body=new.body.with_changes(body=[old_body[0], *new_body]))


def _keep_left_out_members(original: cst.ClassDef, new: cst.ClassDef) -> cst.ClassDef:
    """A class rewritten by a model often drops what it did not mean to change (a class constant, an
    untouched method; its docstring is kept by _keep_docstring). Keep those: attributes before the new
    body, after its docstring, and methods after it. delete_symbol removes a member on purpose."""
    if not isinstance(original.body, cst.IndentedBlock) or not isinstance(new.body, cst.IndentedBlock):
        return new
    old_body, new_body = list(original.body.body), list(new.body.body)
    defined = set().union(*(_names(s) for s in new_body))
    left_out = [s for s in old_body if _names(s) and not _names(s) & defined]
    if not left_out:
        return new
    head = new_body[:1] if new_body and _docstring(new_body[0]) else []
    attributes = [s for s in left_out if not isinstance(s, Definition)]
    methods = [s for s in left_out if isinstance(s, Definition)]
    return new.with_changes(body=new.body.with_changes(body=[*head, *attributes, *new_body[len(head):], *methods]))


def _not_found(module: cst.Module, symbol: str, path: str) -> ToolError:
    names = [row[1] for row in _definitions(module)]
    close = difflib.get_close_matches(symbol, names, n=5, cutoff=0.4) or names[:10]
    return ToolError(f"no class or function named {symbol!r} in {path}. "
                     f"Nearest names: {', '.join(close) or '(none defined)'}. Use outline to see them all.")


def _file_defining(ctx: Context, path: str, symbol: str) -> str:
    """The file to edit: path itself, or, when path is a directory (small models pass "."), the one file
    under it that defines symbol, as read_symbol finds it."""
    if not resolve(ctx.root, path, kind="any").is_dir():
        return path
    found = sorted({m[0] for m in _find_definitions(ctx, _symbol_name(symbol), path)})
    files = [f for f in found if "test" not in f.lower()] or found
    if len(files) == 1:
        return files[0]
    if files:
        raise ToolError(f"{path} is a directory, and {symbol!r} is defined in {len(files)} files under it: "
                        f"{', '.join(files[:10])}. Give the file as path.")
    raise ToolError(f"{path} is a directory, and no def or class named {symbol!r} is under it. Give the file "
                    "as path; read_symbol finds where a name is defined.")


def _apply(ctx: Context, path: str, symbol: str, new_source: str | None, what: str) -> dict:
    symbol = _symbol_name(symbol)
    path = _file_defining(ctx, path, symbol)
    file, text = _python_file(ctx, path)
    module = _parse(text, path)
    rows = _definitions(module)
    if not any(is_named(row[1], symbol) for row in rows):
        symbol = in_module(symbol, resolve(ctx.root, path).relative_to(ctx.root).as_posix())
    if new_source is not None and (value := named(text, symbol, rows)):
        return replace_value(ctx, file, path, text, value, new_source, what)
    new = None
    if new_source is not None:
        if not new_source.strip():
            raise ToolError("new_source is empty; use delete_symbol to remove a definition")
        with_def = _with_def(new_source, symbol)
        if with_def != new_source:
            what += " (the new code began with the function's name, not def; it was read with def)"
        new_source, note = as_meant(path, with_def, textwrap.dedent)
        what += note
        try:
            new = strings_kept(list(cst.parse_module(textwrap.dedent(new_source).strip("\n") + "\n").body),
                               new_source)
        except cst.ParserSyntaxError as exc:
            return result(False, failure="lint_failed", error=(
                f"new_source is not valid Python (line {exc.raw_line}, column {exc.raw_column}): "
                f"{exc.message}. Nothing was written."))
        if not any(isinstance(s, Definition) for s in new):
            raise ToolError("new_source must hold the whole new definition, starting with def or class")
    transformer = _Replace(symbol, new)
    updated = module.visit(transformer)
    if transformer.hits == 0 and "." not in symbol:  # a method by its own name, as read_symbol takes it
        owners = [row[1] for row in definitions(text, path) if row[1].rsplit(".", 1)[-1] == symbol]
        if len(owners) > 1:
            raise ToolError(f"{symbol!r} names {len(owners)} definitions in {path}: {', '.join(owners)}. "
                            "Give the qualified name of the one to change.")
        if owners:
            symbol = owners[0]
            transformer = _Replace(symbol, new)
            updated = module.visit(transformer)
    if transformer.hits == 0 and new is not None and "." not in symbol and defines(new, symbol):
        # A top-level definition that is not there yet is added at the end of the module: small models
        # reach for "replace" when they mean "write this function", and the intent is unambiguous.
        spaced = [new[0].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()]), *new[1:]]
        updated = module.with_changes(body=[*module.body, *spaced])
        exported = None if symbol.startswith("_") else _export(updated, symbol)
        added = "added: it was not defined" + (", and listed in __all__" if exported else "")
        return gated_write(ctx, file, path, text, (exported or updated).code, f"{what} {symbol} ({added})")
    owner, _, name = symbol.rpartition(".")  # a method its class does not have yet: added to the class
    if transformer.hits == 0 and new is not None and owner and defines(new, name) \
            and (grown := added_to_class(module, owner, new)) is not None:
        return gated_write(ctx, file, path, text, grown.code, f"{what} {symbol} (added to {owner}: it was not defined)")
    if transformer.hits == 0:
        raise _not_found(module, symbol, path)
    return gated_write(ctx, file, path, text, updated.code, f"{what} {symbol}")


def _with_def(source: str, symbol: str) -> str:
    """source with `def ` put back before a header that is the symbol's name without it (`name(args):`, a
    small model's slip), when that makes it parse; else source."""
    code = textwrap.dedent(source).lstrip("\n")
    if not code.startswith(symbol.rsplit(".", 1)[-1] + "(") or parses(code):
        return source
    return "def " + code if parses("def " + code) else source


def _export(module: cst.Module, name: str) -> cst.Module | None:
    """module with name appended to its literal __all__, if it has one that lacks it: a public function
    added to such a module is meant to be importable from the package."""
    for n, statement in enumerate(module.body):
        assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name) and assign.targets[0].target.value == "__all__"):
            continue
        names = assign.value
        if not isinstance(names, (cst.List, cst.Tuple)) or not names.elements \
                or not all(isinstance(e.value, cst.SimpleString) for e in names.elements) \
                or any(e.value.evaluated_value == name for e in names.elements):
            return None
        last = names.elements[-1]
        quote = last.value.quote
        spaced = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        elements = [*names.elements[:-1], last.with_changes(comma=spaced),
                    cst.Element(cst.SimpleString(f"{quote}{name}{quote}"), comma=last.comma)]
        listed = statement.with_changes(body=[assign.with_changes(value=names.with_changes(elements=elements))])
        return module.with_changes(body=[*module.body[:n], listed, *module.body[n + 1:]])
    return None


def replace_symbol(ctx: Context, path: str, symbol: str, new_source: str) -> dict:
    return _apply(ctx, path, symbol, new_source, "replace_symbol")


def delete_symbol(ctx: Context, path: str, symbol: str) -> dict:
    return _apply(ctx, path, symbol, None, "delete_symbol")


def add_import(ctx: Context, path: str, statement: str) -> dict:
    file, text = _python_file(ctx, path)
    module = _parse(text, path)
    try:
        parsed = cst.parse_statement(statement.strip() + "\n")
    except cst.ParserSyntaxError as exc:
        raise ToolError(f"{statement!r} is not a Python statement: {exc.message}") from exc
    if not (isinstance(parsed, cst.SimpleStatementLine)
            and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in parsed.body)):
        raise ToolError("statement must be an import, e.g. 'import os' or 'from pathlib import Path'")
    wanted = module.code_for_node(parsed).strip()
    if any(module.code_for_node(s).strip() == wanted for s in module.body):
        return result(True, f"{path} already has `{wanted}`; nothing to do")
    body = list(module.body)
    at = 0
    for n, stmt in enumerate(body):
        is_import = isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)
        is_docstring = n == 0 and isinstance(stmt, cst.SimpleStatementLine) and isinstance(
            stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString)
        if is_import or is_docstring:
            at = n + 1
    body.insert(at, parsed)
    return gated_write(ctx, file, path, text, module.with_changes(body=body).code, f"add_import `{wanted}`")
