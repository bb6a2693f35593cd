"""How a reproduction example a small model wrote is read (omni/check/written.py): the forms it writes that
Python refuses or misreads, each read as the call and value it means, and anything else left as written. The
phrasings are made up for these tests, from no benchmark task."""

from __future__ import annotations

from omni.check.written import bare_words, read_example, unasserted, unprinted


def test_an_assert_in_the_expression_field_is_read_as_its_call_and_value():
    example = read_example("assert total([1, 2]) == 3", "3")
    assert (example.expression, example.expected) == ("total([1, 2])", "3")


def test_the_asserted_value_wins_over_a_field_that_copies_it_without_quotes_or_holds_the_input():
    assert read_example("assert kebab('A  B') == 'a-b'", "a-b").expected == "'a-b'"
    assert read_example("assert kebab('A  B') == 'a-b'", "A  B").expected == "'a-b'"
    assert read_example("assert kebab('A  B') == 'a-b', 'two spaces'", "").expected == "'a-b'"  # its message left


def test_asserts_that_say_no_value_and_other_statements_are_left_as_written():
    for written in ("assert is_even(3)", "assert rank(a) < rank(b)", "assert f(1) == 2 == g(1)",
                    "x = f(1); assert x == 2", "f(1) == 2"):
        assert unasserted(written) is None, written
    assert read_example("assert is_even(3)", "False").expression == "assert is_even(3)"  # refused later, as before


def test_a_print_of_one_call_is_read_as_the_call_inside_an_assert_too():
    assert unprinted("print(width('ab'))") == "width('ab')"
    assert unprinted("print(width('ab'), end='')") == "print(width('ab'), end='')"
    example = read_example("assert print(width('ab')) == 2", "2")
    assert (example.expression, example.expected) == ("width('ab')", "2")


def test_a_value_of_bare_words_reads_quoted_and_any_other_value_does_not():
    assert bare_words("north-east") == "'north-east'" and bare_words("Done") == "'Done'"
    assert bare_words("'quoted'") == "" and bare_words("3 - 1") == "" and bare_words("[a, b]") == ""
