"""The SSRF guard: which addresses are public, which URLs the crawler may open at all."""
from __future__ import annotations

import pytest

from heed_core.netguard import Target, is_local_name, is_public_address, parse_target


@pytest.mark.parametrize(
    "ip",
    [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.215.14",
        "2606:4700:4700::1111",
        "2a00:1450:4001:80b::200e",
        "::ffff:8.8.8.8",  # IPv4-mapped form of a public address
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8
        "2002:808:808::1",  # 6to4 of 8.8.8.8
    ],
)
def test_ssrf_public_unicast_addresses_are_public(ip: str) -> None:
    assert is_public_address(ip) is True


@pytest.mark.parametrize(
    "ip",
    [
        "127.0.0.1",
        "127.0.0.2",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "100.64.0.1",  # CGNAT
        "100.127.255.254",
        "169.254.169.254",  # cloud metadata service
        "169.254.0.1",
        "0.0.0.0",
        "0.1.2.3",
        "224.0.0.1",  # multicast
        "239.255.255.250",
        "240.0.0.1",  # reserved
        "255.255.255.255",
        "192.0.2.10",  # documentation
        "198.18.0.1",  # benchmarking
        "::1",
        "::",
        "fe80::1",
        "fe80::1%eth0",
        "fc00::1",
        "fd12:3456:789a::1",  # unique local
        "fec0::1",  # site-local
        "ff02::1",  # multicast
        "2001:db8::1",  # documentation
        "::ffff:127.0.0.1",  # IPv4-mapped loopback
        "::ffff:169.254.169.254",
        "::ffff:10.0.0.1",
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "::127.0.0.1",  # IPv4-compatible (deprecated) loopback
    ],
)
def test_ssrf_private_loopback_link_local_and_reserved_addresses_are_refused(ip: str) -> None:
    assert is_public_address(ip) is False


@pytest.mark.parametrize("junk", ["", "localhost", "example.com", "256.1.1.1", "1.2.3", "010.0.0.1", " 8.8.8.8"])
def test_ssrf_anything_that_is_not_an_ip_address_is_not_public(junk: str) -> None:
    assert is_public_address(junk) is False


def test_parse_target_defaults_ports_and_lowercases_host() -> None:
    assert parse_target("http://Example.COM/a?b=1") == Target("http", "example.com", 80, False)
    assert parse_target("HTTPS://example.com:8443/") == Target("https", "example.com", 8443, False)
    assert parse_target("https://example.com./") == Target("https", "example.com", 443, False)


def test_parse_target_recognises_ip_literals() -> None:
    assert parse_target("http://127.0.0.1:8080/") == Target("http", "127.0.0.1", 8080, True)
    assert parse_target("http://[::1]/") == Target("http", "::1", 80, True)
    # An IPv4-mapped address is spelled with its IPv4 part (Python 3.13's ipaddress).
    assert parse_target("http://[0:0::ffff:7f00:1]/") == Target("http", "::ffff:127.0.0.1", 80, True)


def test_parse_target_encodes_international_names_with_idna() -> None:
    target = parse_target("https://bücher.example/katalog")
    assert target == Target("https", "xn--bcher-kva.example", 443, False)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/file",
        "file:///etc/passwd",
        "gopher://example.com/",
        "javascript:alert(1)",
        "mailto:someone@example.com",
        "/relative/path",
        "http://",
        "http:///path",
        "http://user:secret@example.com/",  # COMMON-04: no login
        "http://user@example.com/",
        "http://example.com\\@127.0.0.1/",
        "http://example.com:99999/",
        "http://example.com:0/",
        "http://example.com:abc/",
        "http://[not-an-ip]/",
        "http://exa mple.com/",
        "http://example.com/\r\nX-Injected: 1",
        "http://example.com%2F@127.0.0.1/",
        "",
    ],
)
def test_common_04_invalid_or_credentialed_urls_are_refused(url: str) -> None:
    assert parse_target(url) is None


def test_parse_target_never_crashes_on_non_strings() -> None:
    assert parse_target(None) is None  # type: ignore[arg-type]
    assert parse_target(b"http://example.com/") is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url, host",
    [
        ("http://2130706433/", "127.0.0.1"),  # decimal
        ("http://0177.0.0.1/", "127.0.0.1"),  # octal
        ("http://017700000001/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),  # hex, short
        ("http://0x7F000001/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),  # short
        ("http://127.0.1/", "127.0.0.1"),
        ("http://0/", "0.0.0.0"),
        ("http://0x/", "0.0.0.0"),
        ("http://4294967295/", "255.255.255.255"),
        ("http://１２７.０.０.１/", "127.0.0.1"),  # full-width digits, mapped by UTS 46 first
        ("http://127。0。0。1/", "127.0.0.1"),  # ideographic full stops
        ("http://134744072/", "8.8.8.8"),
    ],
)
def test_ssrf_every_ipv4_spelling_a_browser_reads_is_an_ip_literal(url: str, host: str) -> None:
    # WHATWG URL: a host ending in a number is an IPv4 address, never a name for DNS.
    target = parse_target(url)
    assert target is not None and (target.host, target.is_ip) == (host, True)


@pytest.mark.parametrize("url", ["http://1.2.3.4.5/", "http://256.1/", "http://4294967296/", "http://foo.123/",
                                 "http://a.09/", "http://1.0x100.1/", "http://08.0.0.1/"])
def test_ssrf_a_host_ending_in_a_number_that_is_no_ipv4_address_is_refused(url: str) -> None:
    assert parse_target(url) is None


@pytest.mark.parametrize("url", ["http://example.123abc/", "http://foo.0x1g/", "http://v1.example/"])
def test_names_that_merely_contain_digits_stay_names(url: str) -> None:
    target = parse_target(url)
    assert target is not None and target.is_ip is False


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "localhost.", "foo.localhost", "a.b.localhost"])
def test_ssrf_localhost_names_are_local_rfc_6761(host: str) -> None:
    assert is_local_name(host) is True


@pytest.mark.parametrize("host", ["localhost.example", "notlocalhost", "mylocalhost.com", "example.com"])
def test_names_that_only_look_like_localhost_are_not_local(host: str) -> None:
    assert is_local_name(host) is False


def test_ssrf_idna_spellings_of_localhost_are_local() -> None:
    for url in ("http://ⓛocalhost/", "http://localhost\u200b/", "http://LOCALHOST./"):
        target = parse_target(url)
        assert target is not None and is_local_name(target.host), url
