"""The transport prepares a GET as requests' own ``Request.prepare`` would: the same method, URL
(IDNA, percent-encoding, dot segments), headers in their order, and no body."""
from __future__ import annotations

import pytest
import requests

from heed_core.adapters.http import _prepared_get

HEADERS = {"User-Agent": "Heed/1 (+https://bot.example/)", "Accept-Encoding": "gzip, deflate", "Accept": "*/*",
           "If-None-Match": '"v1"'}


@pytest.mark.parametrize("url", [
    "http://127.0.0.2:8000/a/1",
    "https://bücher.example/ä ö?q=ü&x=%20#frag",
    "http://site.example/a%2Fb/../c?",
    "http://site.example",
    "https://site.example:8443/p;param?a=1&a=2",
    "http://[::1]:80/x",
    "http://site.example/%7euser/{}|^`",
])
def test_a_get_is_prepared_as_requests_prepares_it(url: str) -> None:
    # GIVEN requests' own preparation of the GET
    ours, theirs = _prepared_get(url, HEADERS), requests.Request("GET", url, headers=HEADERS).prepare()
    # THEN the transport's is the same on every part that is sent
    assert (ours.method, ours.url, ours.path_url, ours.body) == (theirs.method, theirs.url, theirs.path_url,
                                                                  theirs.body)
    assert list(ours.headers.items()) == list(theirs.headers.items())
    assert "Cookie" not in ours.headers and "Authorization" not in ours.headers


def test_a_url_requests_cannot_prepare_raises_as_before() -> None:
    # GIVEN a URL requests refuses (no host)
    # THEN the transport's preparation refuses it the same way (its fetch says invalid_url)
    with pytest.raises(requests.RequestException):
        requests.Request("GET", "http://", headers=HEADERS).prepare()
    with pytest.raises(requests.RequestException):
        _prepared_get("http://", HEADERS)
