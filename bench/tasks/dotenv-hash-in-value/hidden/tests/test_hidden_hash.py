import io

from dotenv import dotenv_values


def load(text):
    return dotenv_values(stream=io.StringIO(text))


def test_a_hash_inside_an_unquoted_value_is_kept():
    assert load("PASSWORD=ab#cd\n") == {"PASSWORD": "ab#cd"}
    assert load("URL=http://host/#frag\n") == {"URL": "http://host/#frag"}


def test_a_comment_after_whitespace_is_still_dropped():
    assert load("A=b # a comment\nC=d\n") == {"A": "b", "C": "d"}
