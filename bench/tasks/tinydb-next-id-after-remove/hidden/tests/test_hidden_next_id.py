from tinydb import TinyDB
from tinydb.storages import MemoryStorage


def test_insert_after_removing_first_document_and_reopening():
    db = TinyDB(storage=MemoryStorage)
    for n in range(3):
        db.insert({'n': n})
    db.remove(doc_ids=[1])
    again = TinyDB(storage=MemoryStorage)
    again.storage.memory = db.storage.memory
    assert again.insert({'n': 9}) == 4
    assert sorted(doc['n'] for doc in again.all()) == [1, 2, 9]


def test_insert_after_a_gap_in_ids(tmp_path):
    path = tmp_path / 'db.json'
    with TinyDB(path) as db:
        db.insert_multiple({'n': n} for n in range(5))
        db.remove(doc_ids=[2, 3])
    with TinyDB(path) as db:
        assert db.insert({'n': 5}) == 6
        assert len(db) == 4
