import dotenv


def test_unset_key_removes_one_key_and_keeps_the_rest(tmp_path):
    env = tmp_path / ".env"
    env.write_text("A=1\n# note\nB=2\nC=3\n")
    assert dotenv.unset_key(env, "B") == (True, "B")
    assert env.read_text() == "A=1\n# note\nC=3\n"


def test_a_missing_key_or_file_is_reported_not_raised(tmp_path):
    env = tmp_path / ".env"
    env.write_text("A=1\n")
    assert dotenv.unset_key(env, "Z") == (None, "Z") and env.read_text() == "A=1\n"
    assert dotenv.unset_key(tmp_path / "absent.env", "A") == (None, "A")
