import time

import pytest

from itsdangerous import SignatureExpired, URLSafeTimedSerializer


def test_an_expired_token_is_refused(monkeypatch):
    s = URLSafeTimedSerializer("secret", salt="reset")
    token = s.dumps({"user": 7})
    later = time.time() + 3600
    monkeypatch.setattr(time, "time", lambda: later)
    with pytest.raises(SignatureExpired):
        s.loads(token, max_age=600)
    assert s.loads(token, max_age=7200) == {"user": 7}
    assert s.loads(token) == {"user": 7}
