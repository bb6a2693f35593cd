import xmltodict


def test_booleans_are_written_the_xml_way():
    xml = xmltodict.unparse({"cfg": {"debug": True, "cache": False}}, full_document=False)
    assert xml == "<cfg><debug>true</debug><cache>false</cache></cfg>"


def test_a_round_trip_keeps_the_text():
    xml = xmltodict.unparse({"a": {"ok": True}})
    assert xmltodict.parse(xml) == {"a": {"ok": "true"}}
