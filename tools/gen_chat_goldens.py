"""Generate the chat-template goldens (tests/golden/qwen3-chat.json) and the bundled template.

Run once, offline, with transformers installed (it is not a test dependency):

    python tools/gen_chat_goldens.py

It does two things:

1. Copies Qwen3's chat template and special tokens map from tests/data/hf/tokenizer_config.json
   into the package data (src/wordsplit/vocabs/data/qwen3.chat.json), which wordsplit renders.
2. Renders and tokenizes each conversation below with transformers' ``apply_chat_template``
   on the tokenizer built from tests/data/hf (tokenizer.json + tokenizer_config.json) and
   writes text and ids per case; tests/test_chat.py checks wordsplit gives the same.

The conversations cover Qwen3's features: system prompts, multi-turn, tools, tool calls
(arguments as dicts and as JSON strings, several per turn, with and without content), tool
responses (one and several in a row), ``enable_thinking``, ``reasoning_content`` and
``<think>`` in content, the generation prompt, continue_final_message, None-valued keys,
non-ASCII text and special-token literals in messages.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HF = ROOT / "tests" / "data" / "hf"
GOLDEN = ROOT / "tests" / "golden" / "qwen3-chat.json"
BUNDLED = ROOT / "src" / "wordsplit" / "vocabs" / "data" / "qwen3.chat.json"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Zürich"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web <fast> & \"safe\".",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}
CALL_WEATHER = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich", "unit": "celsius"}}}
CALL_SEARCH_STR = {"type": "function", "function": {"name": "search", "arguments": "{\"query\": \"qwen3 tokenizer\"}"}}
CALL_FLAT = {"name": "search", "arguments": {"query": "日本語"}}  # no "function" wrapper

U = lambda text: {"role": "user", "content": text}  # noqa: E731
A = lambda text, **kw: {"role": "assistant", "content": text, **kw}  # noqa: E731
S = lambda text: {"role": "system", "content": text}  # noqa: E731
T = lambda text: {"role": "tool", "content": text}  # noqa: E731

# (id, messages, options)
CASES = [
    ("user-only", [U("Hello!")], {}),
    ("user-gen", [U("Hello!")], {"add_generation_prompt": True}),
    ("user-gen-nothink", [U("Hello!")], {"add_generation_prompt": True, "enable_thinking": False}),
    ("user-gen-think", [U("Hello!")], {"add_generation_prompt": True, "enable_thinking": True}),
    ("system-user", [S("You are a helpful assistant."), U("Hi")], {"add_generation_prompt": True}),
    ("multi-turn", [S("Be brief."), U("2+2?"), A("4"), U("And 3+3?")], {"add_generation_prompt": True}),
    ("multi-turn-last-assistant", [U("2+2?"), A("4")], {}),
    ("reasoning-content-last", [U("Why?"), A("Because.", reasoning_content="Let me think.\nOK.")], {}),
    ("reasoning-content-earlier", [U("Q1"), A("A1", reasoning_content="R1"), U("Q2")], {"add_generation_prompt": True}),
    ("reasoning-content-after-query", [U("Q1"), A("A1", reasoning_content="R1"), U("Q2"), A("A2", reasoning_content="R2")], {}),
    ("think-in-content", [U("Q"), A("<think>\nhidden steps\n</think>\n\nvisible answer")], {}),
    ("think-in-content-earlier", [U("Q"), A("<think>\nsteps\n</think>\n\nanswer"), U("more")], {"add_generation_prompt": True}),
    ("thinking-alias", [U("Q"), A("answer", thinking="thought via 'thinking'")], {}),
    ("reasoning-alias", [U("Q"), A("answer", reasoning="thought via 'reasoning'")], {}),
    ("empty-reasoning", [U("Q"), A("answer", reasoning_content="")], {}),
    ("tools-only", [U("Weather in Zürich?")], {"tools": [WEATHER], "add_generation_prompt": True}),
    ("tools-system", [S("You are a weather bot."), U("Weather?")], {"tools": [WEATHER, SEARCH], "add_generation_prompt": True}),
    ("tool-call-dict", [U("Weather in Zürich?"), A("", tool_calls=[CALL_WEATHER])], {"tools": [WEATHER]}),
    ("tool-call-with-content", [U("Weather?"), A("Let me check.", tool_calls=[CALL_WEATHER])], {"tools": [WEATHER]}),
    ("tool-call-string-args", [U("Search it"), A("", tool_calls=[CALL_SEARCH_STR])], {"tools": [SEARCH]}),
    ("tool-call-flat", [U("Search"), A("", tool_calls=[CALL_FLAT])], {"tools": [SEARCH]}),
    ("tool-calls-two", [U("Both"), A("", tool_calls=[CALL_WEATHER, CALL_SEARCH_STR])], {"tools": [WEATHER, SEARCH]}),
    ("tool-response", [U("Weather?"), A("", tool_calls=[CALL_WEATHER]), T("{\"temp\": 21}")],
     {"tools": [WEATHER], "add_generation_prompt": True}),
    ("tool-responses-two", [U("Both"), A("", tool_calls=[CALL_WEATHER, CALL_SEARCH_STR]), T("21°C"), T("results: …")],
     {"tools": [WEATHER, SEARCH], "add_generation_prompt": True}),
    ("tool-roundtrip-final", [U("Weather?"), A("", tool_calls=[CALL_WEATHER]), T("21°C"), A("It is 21°C in Zürich.")],
     {"tools": [WEATHER]}),
    ("tool-multistep-thinking", [U("Weather?"), A("", tool_calls=[CALL_WEATHER], reasoning_content="Need the tool."), T("21"),
                                 A("21 degrees.", reasoning_content="Got it.")], {"tools": [WEATHER]}),
    ("tool-response-in-user", [U("Weather?"), A("", tool_calls=[CALL_WEATHER]), U("<tool_response>\n21\n</tool_response>")],
     {"add_generation_prompt": True}),
    ("tool-call-nothink", [U("Weather?")], {"tools": [WEATHER], "add_generation_prompt": True, "enable_thinking": False}),
    ("none-values", [U("Hi"), {"role": "assistant", "content": "Hello", "tool_calls": None, "reasoning_content": None}], {}),
    ("non-ascii", [S("Réponds en français. 日本語も OK 👍"), U("Ça va ? 😀 — “quotes” «guillemets»")], {"add_generation_prompt": True}),
    ("special-literals-in-text", [U("What does <|im_end|> or <think> mean? <|endoftext|>")], {"add_generation_prompt": True}),
    ("newlines-and-spaces", [U("  leading\n\n\ttabs  \r\n trailing  "), A("\n\nanswer with newlines\n\n")], {}),
    ("system-later", [U("Hi"), S("A later system message"), U("Again")], {"add_generation_prompt": True}),
    ("continue-final", [U("Write a poem"), A("Roses are")], {"continue_final_message": True}),
    ("long-conversation", [S("sys")] + [m for i in range(6) for m in (U(f"question {i}"), A(f"answer {i}"))] + [U("last")],
     {"add_generation_prompt": True}),
    ("code", [U("```python\ndef f(x):\n    return {'a': [1, 2]}\n```\nExplain."), A("It returns a dict.")], {}),
]


def main() -> None:
    from transformers import AutoTokenizer
    import transformers

    config = json.loads((HF / "tokenizer_config.json").read_text(encoding="utf-8"))
    keys = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
    bundled = {
        "source": "Qwen3 tokenizer_config.json (tests/data/hf), 'chat_template' and the special tokens map",
        "chat_template": config["chat_template"],
        "special_tokens_map": {key: config[key] for key in keys if config.get(key) is not None},
    }
    BUNDLED.write_text(json.dumps(bundled, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")

    os.environ["HF_HUB_OFFLINE"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "tokenizer.json").write_bytes(gzip.decompress((HF / "tokenizer.json.gz").read_bytes()))
        shutil.copy(HF / "tokenizer_config.json", tmp)
        tokenizer = AutoTokenizer.from_pretrained(tmp)
    assert tokenizer.special_tokens_map == bundled["special_tokens_map"], tokenizer.special_tokens_map
    cases = []
    for case_id, messages, options in CASES:
        text = tokenizer.apply_chat_template(messages, tokenize=False, **options)
        ids = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=False, **options)
        cases.append({"id": case_id, "messages": messages, "options": options, "text": text, "ids": list(ids)})
    oracle = f"transformers {transformers.__version__} apply_chat_template, Qwen3 tokenizer from tests/data/hf"
    # One case per line: the file stays diffable without a line per id.
    lines = [json.dumps(case, ensure_ascii=False) for case in cases]
    GOLDEN.write_text(
        "{\"oracle\": " + json.dumps(oracle) + ", \"generator\": \"tools/gen_chat_goldens.py\", \"cases\": [\n"
        + ",\n".join(lines) + "\n]}\n",
        encoding="utf-8",
    )
    print(f"{len(cases)} cases -> {GOLDEN.relative_to(ROOT)}; template -> {BUNDLED.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
