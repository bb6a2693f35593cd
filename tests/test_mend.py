"""A reproduction test file mended before it is written (omni/check/mend.py), on files of no benchmark task."""

from omni.check.mend import imported, lacking, mended

IMPORTS = "from shapes.area import circle_area, square_area\nimport shapes"


def test_a_name_the_shown_imports_bind_gets_its_import_line_and_pytest_its_own():
    code = ("@pytest.mark.parametrize('r', [1, 2])\ndef test_circle(r):\n"
            "    assert circle_area(r) > square_area(r)\n")
    assert mended(code, IMPORTS) == "from shapes.area import circle_area, square_area\nimport pytest\n" + code.rstrip()


def test_the_fence_left_in_the_file_text_is_taken_off():
    code = "```python\nfrom shapes.area import circle_area\n\ndef test_one():\n    assert circle_area(1) > 3\n```"
    assert mended(code, IMPORTS) == code.removeprefix("```python\n").removesuffix("\n```")


def test_what_no_shown_line_binds_stays_undefined_and_a_whole_file_stays_as_it_is():
    unknown = "def test_one():\n    assert hexagon_area(1) > 2\n"
    assert mended(unknown, IMPORTS) == unknown
    whole = "import shapes\n\n\ndef test_one():\n    total = shapes.area.circle_area(1)\n    assert total > 3\n"
    assert mended(whole, IMPORTS) == whole
    assert mended("def test_(:\n", IMPORTS) == "def test_(:\n"  # does not parse: the guard says so to the model
    assert mended("```python\ndef test_one():\n", IMPORTS) == "```python\ndef test_one():\n"  # a fence not closed


def test_a_fence_never_closed_is_taken_off_when_the_rest_parses():
    code = "from shapes.area import circle_area\n\n\ndef test_one():\n    assert circle_area(1) > 3\n"
    assert mended("```python\n" + code, IMPORTS) == code


def test_imports_go_after_a_future_import():
    code = "from __future__ import annotations\n\ndef test_one():\n    assert square_area(2) == 4\n"
    assert mended(code, IMPORTS).splitlines()[:2] == ["from __future__ import annotations",
                                                      "from shapes.area import circle_area, square_area"]


def test_a_standard_library_module_read_and_never_imported_is_imported_by_its_name():
    code = "def test_one():\n    time.sleep(0)\n    assert json.loads('1') == square_area(1)\n"
    assert mended(code, IMPORTS).splitlines()[:3] == ["from shapes.area import circle_area, square_area",
                                                      "import json", "import time"]


def test_the_names_a_file_lacks_are_what_it_reads_and_binds_nowhere():
    code = "import os\n\n\ndef test_one(tmp_path):\n    found = Cache(os.sep)\n    assert found.get(tmp_path) == seen\n"
    assert lacking(code) == {"Cache", "seen"}
    assert lacking("def test_(:\n") == set()
    assert imported("from __future__ import annotations\nx = 1", ["import os"]) == \
        "from __future__ import annotations\nimport os\nx = 1"
