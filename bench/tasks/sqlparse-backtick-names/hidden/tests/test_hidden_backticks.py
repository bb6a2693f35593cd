import sqlparse
from sqlparse.sql import Identifier


def identifiers(sql):
    return [t for t in sqlparse.parse(sql)[0].tokens if isinstance(t, Identifier)]


def test_backtick_quoted_names_lose_their_quotes():
    table = identifiers("SELECT * FROM `orders` o")[0]
    assert table.get_real_name() == "orders" and table.get_alias() == "o"
    column = identifiers("SELECT `total` AS `sum` FROM t")[0]
    assert column.get_real_name() == "total" and column.get_alias() == "sum"


def test_other_quotes_still_work():
    assert identifiers('SELECT * FROM "orders"')[0].get_real_name() == "orders"
