"""A reproduction test's assertions read as examples, so that the checks an example gets apply to the test too: a
test that compares what the code gives with a value of another form (a number with a text) fails on the starting
code for its form alone, and no fix of the code makes it pass.

`assert <call> == <value>` at a test function's top level is read as the example `<call> == <value>`, with the
function's parametrize cases (one example per case) and its plain local names put in. The reading is
conservative: a name whose value is not a constant (a call's result, a list) is used once, since a later use may see
it changed (`buf.push(1)` before `assert buf.items() == [1]`); a name a statement of another kind mentions is
dropped; an assertion that still names anything the function binds is not read."""

from __future__ import annotations

import ast
import itertools

from omni.goal.examples import Example

MAX_READ = 12  # examples read from one test file: a few cases show its form


def asserted_examples(code: str) -> list[Example]:
    """The examples a test file's assertions say, first written first, without repeats; [] for code that is not
    Python."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found: dict[str, Example] = {}
    for function in _test_functions(tree):
        bound = _bound(function)
        for case in _cases(function):
            for example in _asserted(function.body, case, bound):
                found.setdefault(str(example), example)
    return list(found.values())[:MAX_READ]


def what_it_asserts(code: str, limit: int = 4) -> list[str]:
    """A test file's checks, for the person who decides whether to apply a fix it passed: each assert of its test
    functions with the values of their plain local names put in (`assert unit_price(1.0, 10) * 10 != 1.0 * 10`,
    not `assert actual != expected`; a parametrized test's first case), and each exception a
    `with pytest.raises(...)` expects, first written first."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    said: list[str] = []
    tests = [f for f in _test_functions(tree) if f.name.startswith("test")]
    for function in sorted(tests, key=lambda f: f.lineno):
        known = dict(_cases(function)[0])
        for statement in function.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name):
                known[statement.targets[0].id] = _put_in(statement.value, known)
            elif isinstance(statement, ast.Assert):
                said.append(f"assert {ast.unparse(_put_in(statement.test, known))}")
            else:
                said += _checks_within(statement)
                for name in _mentioned(statement):  # a statement of another kind may change what it names
                    known.pop(name, None)
    return list(dict.fromkeys(said))[:limit]


def _checks_within(statement: ast.stmt) -> list[str]:
    """The asserts inside a compound statement, as written, and the exceptions its `pytest.raises` expect."""
    said = []
    for node in ast.walk(statement):
        if isinstance(node, ast.Assert):
            said.append(f"assert {ast.unparse(node.test)}")
        elif isinstance(node, ast.With):
            said += [f"raises {ast.unparse(item.context_expr.args[0])}" for item in node.items
                     if isinstance(item.context_expr, ast.Call) and item.context_expr.args
                     and ast.unparse(item.context_expr.func).endswith("raises")]
    return said


def _test_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    tests = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    for owner in (node for node in tree.body if isinstance(node, ast.ClassDef) and node.name.startswith("Test")):
        tests += [node for node in owner.body if isinstance(node, ast.FunctionDef)]
    return [node for node in tests if node.name.startswith("test")]


def _bound(function: ast.FunctionDef) -> set[str]:
    """The names the function binds: its arguments and every name it assigns."""
    names = {a.arg for a in function.args.args + function.args.kwonlyargs + function.args.posonlyargs}
    return names | {node.id for node in ast.walk(function) if isinstance(node, ast.Name)
                    and isinstance(node.ctx, ast.Store)}


def _cases(function: ast.FunctionDef) -> list[dict[str, ast.expr]]:
    """Each parametrize case as its argument names' values ([{}] for a function with none); a decorator this does
    not read (ids from a function, pytest.param) leaves its names unknown."""
    sets = []
    for decorator in function.decorator_list:
        read = _parametrized(decorator)
        if read:
            sets.append(read)
    cases = [dict(itertools.chain.from_iterable(c.items() for c in combined))
             for combined in itertools.product(*sets)] if sets else [{}]
    return cases[:MAX_READ]


def _parametrized(decorator: ast.expr) -> list[dict[str, ast.expr]]:
    if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("mark.parametrize")
            and len(decorator.args) >= 2):
        return []
    names_node, values = decorator.args[0], decorator.args[1]
    whole = False  # pytest takes each value whole for one name in a string, and unpacks it for names in a list
    if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
        names = [n.strip() for n in names_node.value.split(",") if n.strip()]
        whole = len(names) == 1
    elif isinstance(names_node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in names_node.elts):
        names = [str(e.value) for e in names_node.elts]
    else:
        return []
    if not isinstance(values, (ast.List, ast.Tuple)):
        return []
    cases = []
    for value in values.elts:
        items = [value] if whole else value.elts if isinstance(value, (ast.Tuple, ast.List)) else []
        if len(items) == len(names):
            cases.append(dict(zip(names, items, strict=True)))
    return cases


def _asserted(body: list[ast.stmt], case: dict[str, ast.expr], bound: set[str]) -> list[Example]:
    known = dict(case)
    found = []
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            value = _put_in(statement.value, known)
            known[statement.targets[0].id] = value
            continue
        if isinstance(statement, ast.Assert):
            example = _example(_put_in(statement.test, known), bound)
            if example:
                found.append(example)
            continue
        for name in _mentioned(statement):  # a statement of another kind may change what it names
            known.pop(name, None)
    return found


def _put_in(node: ast.expr, known: dict[str, ast.expr]) -> ast.expr:
    """node with the known names' values put in; a name whose value is not a constant (a call's result, a list, a
    dict) is then forgotten: used once, since what uses it may change it (`items.append(3)`, `fill(table)`)."""
    used = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in known]
    filled = _Filler(known).visit(ast.parse(ast.unparse(node), mode="eval").body)
    for name in used:
        if name in known and not _constant(known[name]):
            known.pop(name)
    return filled


def _constant(node: ast.expr) -> bool:
    """Whether node is a value no call can change: a constant, a negative one, or a tuple of such."""
    return all(isinstance(n, (ast.Constant, ast.Tuple, ast.UnaryOp, ast.unaryop, ast.expr_context))
               for n in ast.walk(node))


class _Filler(ast.NodeTransformer):
    def __init__(self, known: dict[str, ast.expr]):
        self.known = known

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.known.get(node.id, node) if isinstance(node.ctx, ast.Load) else node


def _example(test: ast.expr, bound: set[str]) -> Example | None:
    """The example `test` says when it is `<call> == <value>` (either way round) that names nothing the function
    binds."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    left, right = test.left, test.comparators[0]
    if not _calls(left) and _calls(right):
        left, right = right, left
    if not _calls(left) or _mentioned(test) & bound:
        return None
    return Example(ast.unparse(left), ast.unparse(right))


def _calls(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _mentioned(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
