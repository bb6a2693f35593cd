from pycparser import c_generator, c_parser


def regenerate(source):
    ast = c_parser.CParser().parse(source)
    return c_generator.CGenerator(reduce_parentheses=True).visit(ast)


def test_right_operand_of_equal_precedence_keeps_its_parentheses():
    assert "a - (b + c)" in regenerate("int x = a - (b + c);")
    assert "a / (b * c)" in regenerate("int x = a / (b * c);")
    assert "(a << (b << c))" in regenerate("int x = (a << (b << c));") or "a << (b << c)" in regenerate(
        "int x = (a << (b << c));")


def test_needless_parentheses_still_dropped():
    assert "a + b * c" in regenerate("int x = a + (b * c);")
    assert "a * b + c" in regenerate("int x = (a * b) + c;")
