"""subscriptions.targets: a webhook host resolved once, every address checked, pinned."""

from __future__ import annotations

import httpx
import pytest
from ds_server.subscriptions.delivery import WebhookSender
from ds_server.subscriptions.signing import SigningKey
from ds_server.subscriptions.targets import UnsafeTarget, pin


def resolving_to(*addresses: str):  # type: ignore[no-untyped-def]
    async def resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolve


async def test_a_public_host_is_pinned_to_the_address_that_was_checked() -> None:
    target = await pin(
        "https://hooks.example.com/wake?x=1",
        allow_private=False,
        resolve=resolving_to("93.184.216.34"),
    )
    assert target.urls == ("https://93.184.216.34/wake?x=1",)
    assert target.host_header == "hooks.example.com"
    assert target.server_name == "hooks.example.com"


async def test_ports_and_ipv6_addresses_keep_their_url_form() -> None:
    target = await pin(
        "https://hooks.example.com:8443/w",
        allow_private=False,
        resolve=resolving_to("2606:2800:220:1:248:1893:25c8:1946"),
    )
    assert target.urls == ("https://[2606:2800:220:1:248:1893:25c8:1946]:8443/w",)
    assert target.host_header == "hooks.example.com:8443"


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.5",
        "172.16.3.4",
        "192.168.1.1",
        "127.0.0.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",
        "::1",
        "fe80::1%eth0",
        "fc00::1",
        "::ffff:10.0.0.5",  # IPv4-mapped
        "0.0.0.0",
        "224.0.0.1",
    ],
)
async def test_non_public_addresses_are_refused(address: str) -> None:
    with pytest.raises(UnsafeTarget, match="resolves to"):
        await pin("https://rebind.example/w", allow_private=False, resolve=resolving_to(address))


async def test_one_bad_address_among_good_ones_is_enough_to_refuse() -> None:
    resolve = resolving_to("93.184.216.34", "10.0.0.5")
    with pytest.raises(UnsafeTarget, match=r"10\.0\.0\.5"):
        await pin("https://mixed.example/w", allow_private=False, resolve=resolve)


async def test_private_receivers_can_be_allowed_but_never_unspecified_ones() -> None:
    target = await pin("https://internal/w", allow_private=True, resolve=resolving_to("10.0.0.5"))
    assert target.urls == ("https://10.0.0.5/w",)
    with pytest.raises(UnsafeTarget, match="not a host address"):
        await pin("https://internal/w", allow_private=True, resolve=resolving_to("0.0.0.0"))


async def test_plain_http_must_stay_on_loopback() -> None:
    target = await pin(
        "http://localhost:9000/w", allow_private=False, resolve=resolving_to("127.0.0.1", "::1")
    )
    assert target.urls == ("http://127.0.0.1:9000/w", "http://[::1]:9000/w")
    assert target.server_name is None
    with pytest.raises(UnsafeTarget, match="loopback"):
        await pin("http://localhost/w", allow_private=True, resolve=resolving_to("10.1.2.3"))


async def test_a_host_that_does_not_resolve_is_refused() -> None:
    async def failing(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(UnsafeTarget, match="does not resolve"):
        await pin("https://nowhere.invalid/w", allow_private=False, resolve=failing)
    with pytest.raises(UnsafeTarget, match="does not resolve"):
        await pin("https://empty.example/w", allow_private=False, resolve=resolving_to())


async def test_the_real_resolver_pins_loopback_for_a_local_receiver() -> None:
    target = await pin("http://localhost:1/w", allow_private=False)
    assert target.urls
    assert set(target.urls) <= {"http://127.0.0.1:1/w", "http://[::1]:1/w"}


class TestDelivery:
    """The sender connects to the pinned address, whatever the name resolves to later."""

    async def test_a_rebinding_name_is_delivered_to_the_checked_address_or_not_at_all(
        self,
    ) -> None:
        answers = iter([["93.184.216.34"], ["10.0.0.5"]])

        async def rebinding(host: str, port: int) -> list[str]:
            return next(answers)

        seen: list[httpx.Request] = []

        def receiver(request: httpx.Request) -> httpx.Response:
            seen.append(request)
            return httpx.Response(200, json={"done": True})

        key = SigningKey.generate()
        sender = WebhookSender(
            lambda: key, transport=httpx.MockTransport(receiver), resolve=rebinding
        )
        try:
            first = await sender.send("https://hooks.example.com/wake", b"{}")
            second = await sender.send("https://hooks.example.com/wake", b"{}")
        finally:
            await sender.close()
        assert first.delivered
        assert first.done
        assert not second.delivered
        assert "10.0.0.5" in second.detail
        assert len(seen) == 1
        request = seen[0]
        assert request.url.host == "93.184.216.34"
        assert request.headers["host"] == "hooks.example.com"
        assert request.extensions["sni_hostname"] == "hooks.example.com"

    async def test_the_next_checked_address_is_tried_when_one_refuses(self) -> None:
        tried: list[str] = []

        def receiver(request: httpx.Request) -> httpx.Response:
            tried.append(str(request.url.host))
            if request.url.host == "::1":
                raise httpx.ConnectError("refused", request=request)
            return httpx.Response(204)

        key = SigningKey.generate()
        sender = WebhookSender(
            lambda: key,
            transport=httpx.MockTransport(receiver),
            resolve=resolving_to("::1", "127.0.0.1"),
        )
        try:
            result = await sender.send("http://localhost:8000/w", b"{}")
        finally:
            await sender.close()
        assert result.delivered
        assert tried == ["::1", "127.0.0.1"]

    async def test_an_answer_nested_too_deeply_is_delivered_but_not_done(self) -> None:
        """A receiver's answer nested ~1,000 deep made the decoder raise RecursionError."""

        def receiver(request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, content=b"[" * 3000 + b"]" * 3000)

        key = SigningKey.generate()
        sender = WebhookSender(
            lambda: key,
            transport=httpx.MockTransport(receiver),
            resolve=resolving_to("127.0.0.1"),
        )
        try:
            result = await sender.send("http://localhost:8000/w", b"{}")
        finally:
            await sender.close()
        assert result.delivered
        assert not result.done
