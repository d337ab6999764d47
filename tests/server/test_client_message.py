"""The page socket's fast path for an action message against the slow path (json, then pydantic): fed the
same random and hostile messages, the fast path takes only what the slow path takes, as the very same
message, and every refusal is the slow path's, word for word."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dotfight.server.client_message import (
    DEEPEST_READ,
    TOO_DEEP,
    Parsed,
    QuickAction,
    RefusedMessage,
    parse_client_message,
    parse_slowly,
    quick_action,
)
from dotfight.server.schemas import ActionMessage

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63), -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, -0.0, 1e300, 2.0**63, -(2.0**63), 9.2e18, 1.8446744073709552e19]),
    st.text(max_size=8),
    st.sampled_from(["b1s1", "snipe", "", "\n", "\u2028"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)
KINDS = st.sampled_from(["flick", "claim", "time_out", "abandon", "resign", "ready", "quick_setup", None])


@st.composite
def actions(draw: st.DrawFn) -> Any:
    """An action: mostly a dict with a `type`, sometimes anything at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    action: dict[str, Any] = draw(st.dictionaries(st.sampled_from(["soldier", "kind", "vector", "x"]), JSON))
    kind = draw(KINDS)
    if kind is not None:
        action["type"] = kind
    if draw(st.booleans()):
        action["vector"] = [draw(SCALARS), draw(SCALARS)]
    if draw(st.integers(0, 4)) == 0:  # nested as deep as the limit, or one past it
        nested: Any = draw(SCALARS)
        for _ in range(draw(st.integers(4, 8))):
            nested = [nested] if draw(st.booleans()) else {"k": nested}
        action["deep"] = nested
    return action


MOVE_IDS = st.one_of(
    st.from_regex(r"[A-Za-z0-9._:-]{1,64}", fullmatch=True),
    st.sampled_from(["", "a" * 64, "a" * 65, "m1\n", "\nm1", "m 1", "m1$", "é"]),
    st.text(max_size=70),
    JSON,
)
VERSIONS = st.one_of(SCALARS, st.integers(-3, 2**31 + 3))


@st.composite
def messages(draw: st.DrawFn) -> str:
    """A client message's text: an action-like message with fields missing, extra, mistyped or repeated,
    or another message type, or text that is not quite JSON."""
    fields: dict[str, Any] = {
        "type": draw(st.sampled_from(["action", "action", "action", "hello", "say", "Action", 1])),
        "action": draw(actions()),
        "version": draw(VERSIONS),
        "move_id": draw(MOVE_IDS),
    }
    for name in draw(st.sets(st.sampled_from(list(fields)), max_size=2)):
        del fields[name]
    if draw(st.integers(0, 5)) == 0:
        fields[draw(st.sampled_from(["token", "phrase", "seat", "options"]))] = draw(JSON)
    text = json.dumps(fields)  # NaN and Infinity written as Python's literals, integers of any size
    mangle = draw(st.integers(0, 9))
    if mangle == 0 and len(text) > 1:  # cut short
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif mangle == 1:  # a field repeated: the last one counts
        text = text[:-1] + (", " if len(fields) else "") + f'"type": {json.dumps(draw(JSON))}}}'
    elif mangle == 2:
        text = draw(st.sampled_from([" ", "\ufeff", "\x00", "[", "x"])) + text
    elif mangle == 3:
        text = "[" * draw(st.integers(1, 3000)) + text
    return text


def outcome(parse: Any, text: str) -> tuple[str, Any]:
    """What a parser makes of `text`: the message as it reads (types and all), or its refusal."""
    try:
        parsed: Parsed = parse(text)
    except RefusedMessage as refused:
        return "refused", (refused.error.code, refused.error.message, refused.error.extra, refused.hello)
    if isinstance(parsed, QuickAction):
        return "read", as_read(parsed)
    return "read", (type(parsed).__name__, repr(parsed.model_dump()))


def as_read(quick: QuickAction) -> tuple[str, str]:
    """The fast path's action as the slow path's `ActionMessage` would be dumped (types and all)."""
    return "ActionMessage", repr({"type": "action", **quick._asdict()})


@given(messages())
@example('{"type":"action","action":{"type":"flick","soldier":"b1s1","kind":"snipe","vector":[0.5,-1]},'
         '"version":7,"move_id":"m1"}')  # fmt: skip
@example('{"type":"action","action":{"type":"ready","n":18446744073709551616},"version":0,"move_id":"m"}')
@example('{"type":"action","action":{"type":"ready","n":1e999},"version":0,"move_id":"m"}')
@example('{"type":"action","action":{"type":"ready"},"version":0,"move_id":"m","type":"hello"}')
@example('{"type":"action","action":{"type":"ready"},"version":true,"move_id":"m"}')
@example('{"type":"action","action":{"type":"ready"},"version":0,"move_id":"m\\n"}')
@example('{"type":"action","action":{"type":"claim","x":1},"version":0,"move_id":"m"}')
@example('{"type":"action","action":{"type":"time_out"},"version":0,"move_id":"m"}')
@example('{"type":"action","action":{"a":[[[[[[1]]]]]]},"version":0,"move_id":"m"}')
@example('{"type":"action","action":{"a":[[[[[[]]]]]]},"version":0,"move_id":"m"}')
@example('{"type":"action","action":{"a":[[[[[1]]]]]},"version":0,"move_id":"m"}')
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_fast_path_takes_only_what_the_slow_path_takes_and_reads_it_the_same(text: str) -> None:
    slow = outcome(parse_slowly, text)
    quick = quick_action(text)
    if quick is not None:
        assert slow == ("read", as_read(quick))
    assert outcome(parse_client_message, text) == slow


@pytest.mark.parametrize(
    "text",
    [
        '{"type":"action","action":{"type":"flick","soldier":"b1s1","kind":"snipe","vector":[0.5,-1]},'
        '"version":7,"move_id":"m1"}',
        '{"type": "action", "move_id": "a.b:c-d_9", "version": 2147483647, "action": {"type": "claim"}}',
        '{"type":"action","action":{"type":"position","soldiers":[{"id":"r1s1","x":1,"y":2}]},'
        '"version":0,"move_id":"m"}',
    ],
)
def test_a_well_formed_action_is_read_by_the_fast_path(text: str) -> None:
    quick = quick_action(text)
    assert quick is not None
    assert {"type": "action", **quick._asdict()} == json.loads(text)
    assert outcome(parse_slowly, text) == ("read", as_read(quick))


@pytest.mark.parametrize(
    "text",
    [
        # orjson reads an integer past 64 bits as a float; Python's json (the slow path) as an int
        '{"type":"action","action":{"type":"ready","n":18446744073709551616},"version":0,"move_id":"m"}',
        '{"type":"action","action":{"type":"ready","n":NaN},"version":0,"move_id":"m"}',
        '{"type":"action","action":{"type":"ready"},"version":0,"move_id":"m","extra":1}',
        '{"type":"hello","version":0}',
    ],
)
def test_what_the_fast_path_cannot_vouch_for_goes_the_slow_path(text: str) -> None:
    assert quick_action(text) is None
    slow = outcome(parse_slowly, text)
    assert outcome(parse_client_message, text) == slow
    if slow[0] == "read" and "18446744073709551616" in text:
        parsed = parse_client_message(text)
        assert isinstance(parsed, ActionMessage) and parsed.action["n"] == 2**64
        assert type(parsed.action["n"]) is int and not math.isnan(parsed.action["n"])


def _from_deeper_in_the_stack(frames: int, text: str) -> tuple[str, Any]:
    """`outcome(parse_slowly, text)` called `frames` Python calls further down the stack."""
    if frames == 0:
        return outcome(parse_slowly, text)
    return _from_deeper_in_the_stack(frames - 1, text)


@pytest.mark.parametrize("depth", [257, 700, 2000])
@pytest.mark.parametrize("fault", ["x", "", "]" * 3])
def test_a_deep_message_is_refused_in_the_same_words_wherever_it_is_read_from(depth: int, fault: str) -> None:
    # json's C parser counts nesting against the recursion limit: "[" * 700 then a fault read from a
    # shallow stack was "not JSON", from 400 frames down "nested too deeply" (the CI run that found
    # it had the fast path's slow fallback one frame deeper than the test's own call).
    text = "[" * depth + fault
    shallow = outcome(parse_slowly, text)
    assert shallow == ("refused", (TOO_DEEP.code, TOO_DEEP.message, TOO_DEEP.extra, False))
    assert _from_deeper_in_the_stack(400, text) == shallow
    assert outcome(parse_client_message, text) == shallow


def test_a_message_nested_as_deep_as_is_read_is_judged_by_json_and_the_schema() -> None:
    # Brackets inside strings do not count, and up to DEEPEST_READ the text is json's to judge.
    inside_a_string = '{"type":"hello","token":"' + "[" * 600 + '","version":0}'
    read_or_refused, how = outcome(parse_slowly, inside_a_string)
    assert read_or_refused == "read" or how[1] != TOO_DEEP.message, how
    malformed = "[" * DEEPEST_READ + "x"
    assert outcome(parse_slowly, malformed)[1][1].startswith("not JSON")
