from semver import Version

SPEC_ORDER = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
              "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]


def test_spec_precedence():
    versions = [Version.parse(v) for v in SPEC_ORDER]
    assert sorted(reversed(versions)) == versions


def test_numeric_identifier_below_alphanumeric():
    assert Version.parse("2.0.0-7") < Version.parse("2.0.0-x")
    assert Version.parse("2.0.0-rc.x") > Version.parse("2.0.0-rc.3")
    assert Version.parse("2.0.0-rc.3").compare("2.0.0-rc.x") == -1
