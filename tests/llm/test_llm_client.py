"""The model client through the real openai SDK, over real HTTP, against the scripted server."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from tests.scripted_server import RecordedRequest, Reply, ScriptedServer, unused_base_url
from tests.scripted_server import scripted_server as scripted_server  # noqa: F401 (fixture)
from tui_engineer.config.settings import Settings
from tui_engineer.llm import (
    AuthRejected,
    Budget,
    BudgetExceeded,
    LLMError,
    MissingApiKey,
    ModelClient,
    ModelReplyError,
    ServerUnreachable,
    UnknownModel,
    UsageLedger,
    price_for,
)
from tui_engineer.llm.client import CONTINUE_PROMPT

KEY = "sk-proj-secret-abcdef123456"
ASK = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hi."}]
FAST = 0.01  # Retry-After seconds for fault replies, so SDK retries are quick

MakeClient = Callable[..., ModelClient]


@pytest.fixture
async def make_client(scripted_server: ScriptedServer) -> AsyncIterator[MakeClient]:
    clients: list[ModelClient] = []

    def make(**overrides: Any) -> ModelClient:
        kwargs: dict[str, Any] = {
            "model": "gpt-4o-mini",
            "base_url": scripted_server.base_url,
            "api_key": KEY,
            "max_retries": 2,
            "timeout": 5.0,
            **overrides,
        }
        clients.append(ModelClient(**kwargs))
        return clients[-1]

    yield make
    for client in clients:
        await client.aclose()


# ----- streaming and the non-stream fallback


async def test_streamed_text_arrives_in_pieces_and_equals_the_reply(scripted_server, make_client):
    scripted_server.script(Reply(text="Hello there, nice to meet you."))
    pieces: list[str] = []

    done = await make_client().complete(ASK, on_text=pieces.append)

    assert done.text == "Hello there, nice to meet you."
    assert len(pieces) > 3 and "".join(pieces) == done.text
    assert done.finish_reason == "stop" and done.continued == 0
    sent = scripted_server.chat_requests[0]
    assert sent.stream and sent.body["stream_options"] == {"include_usage": True}
    assert sent.messages == ASK and sent.model == "gpt-4o-mini"


async def test_non_stream_mode_gives_the_whole_text_once(scripted_server, make_client):
    scripted_server.script(Reply(text="All at once."))
    pieces: list[str] = []

    done = await make_client().complete(ASK, on_text=pieces.append, stream=False)

    assert pieces == ["All at once."] and done.text == "All at once."
    assert not scripted_server.chat_requests[0].stream


async def test_server_refusing_streams_gets_non_stream_calls_for_the_session(make_client):
    server = ScriptedServer(streaming=False).start()
    try:
        server.script(Reply(text="first"), Reply(text="second"))
        client = make_client(base_url=server.base_url)
        pieces: list[str] = []

        first = await client.complete(ASK, on_text=pieces.append)
        second = await client.complete(ASK)

        assert (first.text, second.text, pieces) == ("first", "second", ["first"])
        assert [r.stream for r in server.chat_requests] == [True, False, False]
    finally:
        server.stop()
    server.check()


async def test_server_refusing_stream_options_still_streams_without_them(
    scripted_server, make_client
):
    def refuse_options(request: RecordedRequest) -> Reply:
        if "stream_options" in request.body:
            return Reply(status=400, error={"message": "Unrecognized argument: stream_options"})
        return Reply(text="streamed anyway", report_usage=False)

    scripted_server.script(refuse_options, refuse_options)

    done = await make_client().complete(ASK)

    assert done.text == "streamed anyway"
    second = scripted_server.chat_requests[1]
    assert second.stream and "stream_options" not in second.body
    assert done.usage.estimated  # no usage without stream_options: counted as chars / 4


async def test_max_output_tokens_is_sent_to_the_server(scripted_server, make_client):
    scripted_server.script(Reply(text="ok"))
    await make_client().complete(ASK, max_output_tokens=300)
    assert scripted_server.chat_requests[0].body["max_completion_tokens"] == 300


async def test_empty_reply_is_an_error_not_an_empty_answer(scripted_server, make_client):
    scripted_server.script(Reply(text=""), Reply(text=""), Reply(text=""))
    with pytest.raises(ModelReplyError, match="empty reply 3 times"):
        await make_client().complete(ASK)


# ----- usage and cost


async def test_usage_per_call_and_ledger_totals_with_known_price(scripted_server, make_client):
    scripted_server.script(Reply(text="one", usage=(1000, 200)), Reply(text="two", usage=(500, 50)))
    client = make_client(model="gpt-4o-mini")

    first = await client.complete(ASK)
    second = await client.complete(ASK, stream=False)

    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (1000, 200)
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (500, 50)
    assert not first.usage.estimated and not second.usage.estimated
    input_price, output_price = price_for("gpt-4o-mini")
    assert first.usage.usd == pytest.approx((1000 * input_price + 200 * output_price) / 1e6)
    ledger = client.ledger
    assert (ledger.prompt_tokens, ledger.completion_tokens, ledger.total_tokens) == (
        1500,
        250,
        1750,
    )
    assert ledger.usd == pytest.approx(first.usage.usd + second.usage.usd)


async def test_unknown_model_price_shows_as_unknown_never_zero(scripted_server, make_client):
    scripted_server.script(Reply(text="local", usage=(100, 10)))
    client = make_client(model="my-local-llama")

    done = await client.complete(ASK)

    assert done.usage.usd is None and client.ledger.usd is None
    assert "cost unknown" in client.ledger.summary()


async def test_usage_is_estimated_when_the_server_reports_none(scripted_server, make_client):
    scripted_server.script(Reply(text="x" * 400, report_usage=False))
    done = await make_client().complete(ASK)
    assert done.usage.estimated and done.usage.completion_tokens == 100
    assert done.usage.prompt_tokens > 0


def test_price_table_knows_snapshots_and_not_strangers():
    assert price_for("gpt-4o-mini-2024-07-18") == price_for("gpt-4o-mini") is not None
    assert price_for("openai/gpt-4o") == price_for("gpt-4o") is not None
    assert price_for("qwen2.5-coder:7b") is None


# ----- retries


async def test_rate_limit_then_success_is_retried(scripted_server, make_client):
    scripted_server.script(Reply(status=429, retry_after=FAST), Reply(text="after the wait"))
    assert (await make_client().complete(ASK)).text == "after the wait"
    assert len(scripted_server.chat_requests) == 2


async def test_server_error_then_success_is_retried(scripted_server, make_client):
    scripted_server.script(Reply(status=500, retry_after=FAST), Reply(text="recovered"))
    assert (await make_client().complete(ASK)).text == "recovered"
    assert len(scripted_server.chat_requests) == 2


async def test_persistent_server_error_stops_after_bounded_tries(scripted_server, make_client):
    scripted_server.script(*[Reply(status=500, retry_after=FAST)] * 3)

    with pytest.raises(LLMError) as caught:
        await make_client(max_retries=2).complete(ASK)

    assert "HTTP 500" in str(caught.value) and "3 attempts" in str(caught.value)
    assert scripted_server.base_url in str(caught.value)
    assert len(scripted_server.chat_requests) == 3


async def test_dropped_stream_is_retried_from_scratch(scripted_server, make_client):
    scripted_server.script(
        Reply(text="this will be cut off here", drop_after=2), Reply(text="complete answer")
    )
    shown: list[str] = []
    client = make_client()

    done = await client.complete(ASK, on_text=shown.append, on_reset=shown.clear)

    assert done.text == "complete answer" and "".join(shown) == "complete answer"
    assert len(scripted_server.chat_requests) == 2
    # The cut attempt was probably billed: it is in the ledger, marked as estimated.
    assert [call.estimated for call in client.ledger.calls] == [True, False]


async def test_stream_dropped_every_time_gives_a_clear_error(scripted_server, make_client):
    scripted_server.script(*[Reply(text="never finishes", drop_after=1)] * 3)
    with pytest.raises(ModelReplyError, match="cut in the middle"):
        await make_client().complete(ASK)
    assert len(scripted_server.chat_requests) == 3


# ----- replies cut by the token limit


async def test_length_cut_is_continued_and_stitched(scripted_server, make_client):
    scripted_server.script(
        Reply(text="def add(a, b):\n", finish_reason="length", usage=(50, 5)),
        Reply(text="    return a + b\n", usage=(60, 6)),
    )
    shown: list[str] = []

    done = await make_client().complete(ASK, on_text=shown.append, max_output_tokens=5)

    assert done.text == "def add(a, b):\n    return a + b\n" == "".join(shown)
    assert done.continued == 1 and done.finish_reason == "stop"
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (110, 11)
    follow_up = scripted_server.chat_requests[1].messages
    assert follow_up[:2] == ASK
    assert follow_up[2] == {"role": "assistant", "content": "def add(a, b):\n"}
    assert follow_up[3] == {"role": "user", "content": CONTINUE_PROMPT}


async def test_reply_cut_off_forever_is_refused(scripted_server, make_client):
    scripted_server.script(*[Reply(text="more ", finish_reason="length")] * 3)
    with pytest.raises(ModelReplyError, match="cut off by the token limit"):
        await make_client(max_continuations=2).complete(ASK, max_output_tokens=1)
    assert len(scripted_server.chat_requests) == 3


# ----- errors the user can act on


async def test_rejected_key_names_the_variable_and_never_shows_the_key(
    scripted_server, make_client
):
    echo = f"Incorrect API key provided: {KEY[:8]}*********{KEY[-4:]}. Find your key at ..."
    scripted_server.script(Reply(status=401, error={"message": echo}))

    with pytest.raises(AuthRejected) as caught:
        await make_client(api_key_env="MY_LLM_KEY").complete(ASK)

    message = str(caught.value)
    assert "MY_LLM_KEY" in message and scripted_server.base_url in message
    assert KEY not in message and KEY[:8] not in message and KEY[-4:] not in message
    assert caught.value.__cause__ is None  # the SDK error (with the echoed key) is not chained
    assert len(scripted_server.chat_requests) == 1  # a bad key is not retried


async def test_server_checking_the_key_accepts_the_right_one(make_client):
    server = ScriptedServer(api_key=KEY).start()
    try:
        server.script(Reply(text="welcome"))
        assert (await make_client(base_url=server.base_url).complete(ASK)).text == "welcome"
        with pytest.raises(AuthRejected, match="OPENAI_API_KEY"):
            await make_client(base_url=server.base_url, api_key="wrong").complete(ASK)
    finally:
        server.stop()


async def test_unknown_model_names_model_url_and_config_hint(scripted_server, make_client):
    scripted_server.script(Reply(status=404, error={"message": "The model `gpt-9` does not exist"}))

    with pytest.raises(UnknownModel) as caught:
        await make_client(model="gpt-9").complete(ASK)

    message = str(caught.value)
    assert "'gpt-9'" in message and scripted_server.base_url in message
    assert "tui-engineer config" in message


async def test_nothing_listening_names_the_url_tried(make_client):
    url = unused_base_url()
    with pytest.raises(ServerUnreachable) as caught:
        await make_client(base_url=url, max_retries=0).complete(ASK)
    assert url in str(caught.value) and "OPENAI_BASE_URL" in str(caught.value)


async def test_timeouts_after_retries_say_timed_out(scripted_server, make_client):
    scripted_server.script(Reply(text="too late", delay=2), Reply(text="too late", delay=2))
    started = time.monotonic()

    with pytest.raises(ServerUnreachable, match="timed out"):
        await make_client(timeout=0.2, max_retries=1).complete(ASK)

    assert len(scripted_server.chat_requests) == 2
    assert time.monotonic() - started < 2


async def test_stream_stalling_mid_reply_is_retried_then_reported(scripted_server, make_client):
    scripted_server.script(*[Reply(text="a b c", chunk_delay=2)] * 3)
    with pytest.raises(ServerUnreachable, match="sent no text for"):
        await make_client(timeout=0.2).complete(ASK)
    assert len(scripted_server.chat_requests) == 3


def test_missing_key_says_which_variable_to_set():
    with pytest.raises(MissingApiKey) as caught:
        ModelClient(model="m", base_url=None, api_key=None, api_key_env="MY_LLM_KEY")
    assert "MY_LLM_KEY" in str(caught.value) and "local" in str(caught.value)


# ----- check_connection


async def test_check_connection_passes_for_a_served_model(scripted_server, make_client):
    scripted_server.models = ["gpt-4o-mini", "other"]
    await make_client().check_connection()
    assert scripted_server.requests[-1].path == "/v1/models"


async def test_check_connection_lists_what_the_server_has(scripted_server, make_client):
    scripted_server.models = ["llama3", "qwen2.5-coder"]
    with pytest.raises(UnknownModel, match="llama3, qwen2.5-coder"):
        await make_client().check_connection()


async def test_check_connection_reports_a_rejected_key(scripted_server, make_client):
    scripted_server.script_models(Reply(status=401))
    with pytest.raises(AuthRejected, match="OPENAI_API_KEY"):
        await make_client().check_connection()


async def test_check_connection_reports_an_unreachable_server(make_client):
    url = unused_base_url()
    with pytest.raises(ServerUnreachable, match=url):
        await make_client(base_url=url, max_retries=0).check_connection()


# ----- budgets


async def test_token_cap_stops_the_next_call_before_it_is_sent(scripted_server, make_client):
    scripted_server.script(Reply(text="first", usage=(700, 100)))
    client = make_client(budget=Budget(max_tokens=1000))
    await client.complete(ASK, max_output_tokens=200)  # ~14 prompt + 200: fits

    # 800 used + ~14 leaves < 256 tokens for a reply: not worth a call, so none is made.
    with pytest.raises(BudgetExceeded) as caught:
        await client.complete(ASK, max_output_tokens=400)

    assert caught.value.budget == "tokens"
    assert "800 of 1,000 tokens" in str(caught.value) and "--max-tokens" in str(caught.value)
    assert len(scripted_server.chat_requests) == 1


async def test_a_reply_limit_shrinks_to_what_the_token_cap_leaves(scripted_server, make_client):
    scripted_server.script(Reply(text="first", usage=(500, 100)), Reply(text="second"))
    client = make_client(budget=Budget(max_tokens=1000))
    await client.complete(ASK, max_output_tokens=200)
    await client.complete(ASK, max_output_tokens=800)  # 600 used: at most ~386 are left
    sent = scripted_server.chat_requests[1].body or {}
    assert 256 <= sent["max_completion_tokens"] <= 400


async def test_continuations_are_budget_checked_too(scripted_server, make_client):
    scripted_server.script(Reply(text="half", finish_reason="length", usage=(900, 100)))
    # The first call (~14 + 100) fits; its continuation (1000 used + ~60 + 100) does not.
    client = make_client(budget=Budget(max_tokens=1100))

    with pytest.raises(BudgetExceeded):
        await client.complete(ASK, max_output_tokens=100)

    assert len(scripted_server.chat_requests) == 1


async def test_money_cap_stops_the_session(scripted_server, make_client):
    # gpt-4o: 1M prompt tokens cost $2.50 - far over a 1-dollar cap.
    scripted_server.script(Reply(text="pricey", usage=(1_000_000, 10)))
    client = make_client(model="gpt-4o", budget=Budget(max_usd=1.0))
    await client.complete(ASK)

    with pytest.raises(BudgetExceeded, match=r"\$2\.50.* of \$1\.00") as caught:
        await client.complete(ASK)

    assert caught.value.budget == "usd" and "--max-usd" in str(caught.value)
    assert len(scripted_server.chat_requests) == 1


def test_money_cap_with_an_unknown_price_is_refused_up_front():
    with pytest.raises(LLMError, match="price of 'my-local-llama' is unknown"):
        ModelClient(model="my-local-llama", base_url=None, api_key="k", budget=Budget(max_usd=5))


async def test_wall_time_cap_stops_before_calling(scripted_server, make_client):
    budget = Budget(max_wall_seconds=60, started_at=time.monotonic() - 61)

    with pytest.raises(BudgetExceeded, match="Time budget") as caught:
        await make_client(budget=budget).complete(ASK)

    assert caught.value.budget == "wall_time" and "--max-minutes" in str(caught.value)
    assert scripted_server.chat_requests == []


async def test_from_settings_takes_model_url_key_and_budgets(scripted_server):
    settings = Settings(
        model="gpt-4o-mini", base_url=scripted_server.base_url, api_key=KEY, max_tokens=10
    )
    ledger = UsageLedger()
    client = ModelClient.from_settings(settings, ledger=ledger)
    try:
        assert client.ledger is ledger and client.budget.max_tokens == 10
        with pytest.raises(BudgetExceeded):  # 10 tokens cannot fit any call
            await client.complete(ASK)
    finally:
        await client.aclose()
