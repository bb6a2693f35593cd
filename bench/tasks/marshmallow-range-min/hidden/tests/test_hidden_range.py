import pytest

from marshmallow import Schema, ValidationError, fields, validate


class Order(Schema):
    quantity = fields.Integer(validate=validate.Range(min=1, max=10))
    discount = fields.Float(validate=validate.Range(min=0, min_inclusive=False))


def test_the_lower_bound_is_included_unless_it_is_said_not_to_be():
    assert Order().load({"quantity": 1, "discount": 0.5}) == {"quantity": 1, "discount": 0.5}
    with pytest.raises(ValidationError) as raised:
        Order().load({"quantity": 1, "discount": 0})
    assert "discount" in raised.value.messages and "quantity" not in raised.value.messages


def test_values_below_the_range_are_refused():
    with pytest.raises(ValidationError):
        validate.Range(min=1)(0)
