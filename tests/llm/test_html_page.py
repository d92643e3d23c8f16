"""A base URL that answers 200 with a web page (a web UI, a proxy's login page, a URL without
/v1) is named for what it is, at once: not "the connection was cut" after three tries. The
real openai client over real HTTP to the scripted server answering every request with HTML;
doctor says the same from a real `tui-engineer doctor` process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.scripted_server import Reply, ScriptedServer
from tests.test_doctor import KEY, doctor, line
from tui_engineer.llm import LLMError, ModelClient

ASK = [{"role": "user", "content": "Say hi."}]
SAID = "answered with an HTML page, not the OpenAI API: is the base URL right, ending in /v1?"


@pytest.fixture
def web_page() -> Iterator[ScriptedServer]:
    with ScriptedServer(html_page=True) as server:
        yield server


@pytest.mark.parametrize("stream", [True, False])
async def test_a_chat_call_to_a_web_page_says_so_before_any_retry(
    web_page: ScriptedServer, stream: bool
) -> None:
    client = ModelClient(
        model="test-model", base_url=web_page.base_url, api_key=KEY, max_retries=2, timeout=5.0
    )
    try:
        with pytest.raises(LLMError) as raised:
            await client.complete(ASK, stream=stream)
    finally:
        await client.aclose()
    assert f"The server at {web_page.base_url} {SAID}" in str(raised.value)
    assert len(web_page.chat_requests) == 1  # no retry: asking again changes nothing


async def test_the_connection_check_says_so(web_page: ScriptedServer) -> None:
    client = ModelClient(model="test-model", base_url=web_page.base_url, api_key=KEY)
    try:
        with pytest.raises(LLMError, match="answered with an HTML page"):
            await client.check_connection()
    finally:
        await client.aclose()


def test_doctor_says_so(make_repo, web_page: ScriptedServer) -> None:
    done = doctor(make_repo(), "--base-url", web_page.base_url, OPENAI_API_KEY=KEY)
    assert "Traceback" not in done.stdout + done.stderr
    said = line(done.stdout, "model server")
    assert said.startswith("✗") and SAID in done.stdout, done.stdout


# --- after the server has answered: a proxy's passing error page (issue 48, part 4) ---------


@pytest.mark.parametrize("stream", [True, False])
async def test_an_html_page_after_a_proper_answer_is_retried_as_a_passing_error_page(
    scripted_server: ScriptedServer, stream: bool
) -> None:
    scripted_server.script(Reply(text="hi"), Reply(html_page=True), Reply(text="again"))
    client = ModelClient(
        model="test-model", base_url=scripted_server.base_url, api_key=KEY, timeout=5.0
    )
    retried: list[str] = []
    try:
        assert (await client.complete(ASK, stream=stream)).text == "hi"
        second = await client.complete(ASK, stream=stream, on_retry=retried.append)
    finally:
        await client.aclose()
    assert second.text == "again"
    assert retried == ["an HTML error page from a proxy or gateway"]
    assert len(scripted_server.chat_requests) == 3


async def test_html_pages_after_a_proper_answer_are_retried_a_bounded_number_of_times(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.script(Reply(text="hi"), *[Reply(html_page=True)] * 3)
    client = ModelClient(
        model="test-model", base_url=scripted_server.base_url, api_key=KEY, timeout=5.0
    )
    try:
        await client.complete(ASK)
        with pytest.raises(LLMError) as raised:
            await client.complete(ASK)
    finally:
        await client.aclose()
    said = str(raised.value)
    assert "HTML page" in said and "3 times in a row" in said
    assert "proxy" in said and "ending in /v1" not in said  # it answered properly before
    assert len(scripted_server.chat_requests) == 4
