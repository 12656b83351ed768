"""Chat templates: Qwen3's rendered and tokenized exactly as transformers does, and the sandbox.

The goldens (tests/golden/qwen3-chat.json) were made by tools/gen_chat_goldens.py with
transformers' ``apply_chat_template``; each case is rendered and tokenized again here on both
backends. The environment tests check the pieces transformers sets up (tojson, raise_exception,
strftime_now, loop controls, dict, namespace, generation blocks, the sandbox).
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys
from datetime import datetime

import pytest

from conftest import BACKENDS, DATA, GOLDEN, tokenizer_for
from wordsplit import TokenizerOptions, Vocab, load_vocab
from wordsplit.chat import bundled_chat_data, compile_chat_template, plain_data, render_chat
from wordsplit.errors import ChatTemplateError, MissingDependencyError


GOLDEN_DATA = json.loads((GOLDEN / "qwen3-chat.json").read_text(encoding="utf-8"))
CASES = GOLDEN_DATA["cases"]


def test_golden_names_its_oracle_and_covers_the_features():
    assert GOLDEN_DATA["oracle"].startswith("transformers ")
    assert len(CASES) >= 30
    options = [case["options"] for case in CASES]
    messages = [m for case in CASES for m in case["messages"]]
    assert any("tools" in o for o in options)
    assert any(m.get("tool_calls") for m in messages)
    assert any(m["role"] == "tool" for m in messages)
    assert any(o.get("enable_thinking") is False for o in options)
    assert any(m.get("reasoning_content") for m in messages)
    assert any(o.get("add_generation_prompt") for o in options)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_matches_transformers(case, backend):
    tok = tokenizer_for("qwen3", backend=backend)
    options = dict(case["options"])
    assert tok.apply_chat_template(case["messages"], tokenize=False, **options) == case["text"]
    assert tok.apply_chat_template(case["messages"], **options) == case["ids"]
    assert tok.count_chat_tokens(case["messages"], **options) == len(case["ids"])


def test_batch_of_conversations():
    tok = tokenizer_for("qwen3", backend="native")
    plain = [case for case in CASES if not case["options"]][:4]
    conversations = [case["messages"] for case in plain]
    assert tok.apply_chat_template(conversations) == [case["ids"] for case in plain]
    assert tok.apply_chat_template(conversations, tokenize=False) == [case["text"] for case in plain]


def test_bundled_template_is_the_tokenizer_configs():
    config = json.loads((DATA / "hf" / "tokenizer_config.json").read_text(encoding="utf-8"))
    data = bundled_chat_data("qwen3")
    assert data["chat_template"] == config["chat_template"]
    assert data["special_tokens_map"] == {"eos_token": config["eos_token"], "pad_token": config["pad_token"]}


def test_messages_are_not_changed():
    messages = [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A", "thinking": "T", "x": None}]
    before = json.dumps(messages)
    tokenizer_for("qwen3").apply_chat_template(messages)
    assert json.dumps(messages) == before


# -- where templates come from --------------------------------------------------------------------


@pytest.fixture(scope="module")
def qwen3_from_files(tmp_path_factory):
    """Qwen3's tokenizer.json with its tokenizer_config.json beside it, as a model repo has them."""
    directory = tmp_path_factory.mktemp("models") / "Qwen3-8B"
    directory.mkdir()
    for name in ("tokenizer.json.gz", "tokenizer_config.json"):
        (directory / name).write_bytes((DATA / "hf" / name).read_bytes())
    return load_vocab(directory)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_template_of_tokenizer_config_renders_as_the_bundled_one(qwen3_from_files, backend):
    vocab = qwen3_from_files
    assert vocab.name == "Qwen3-8B" and vocab.chat_template is not None  # its own, not the bundled fallback
    tok = TokenizerOptions(backend=backend).build(vocab)
    for case in CASES:
        options = dict(case["options"])
        assert tok.apply_chat_template(case["messages"], tokenize=False, **options) == case["text"], case["id"]
        assert tok.apply_chat_template(case["messages"], **options) == case["ids"], case["id"]


def test_the_bundled_template_is_for_qwen3_only(tmp_path):
    """Qwen3's tokenizer.json without its config has no template: the bundled one belongs to the
    registered ``qwen3``, not to whatever has its tokens."""
    (tmp_path / "tokenizer.json.gz").write_bytes((DATA / "hf" / "tokenizer.json.gz").read_bytes())
    vocab = load_vocab(tmp_path)
    assert vocab.content_hash == load_vocab("qwen3").content_hash and vocab.chat_template is None
    with pytest.raises(ChatTemplateError, match="tokenizer_config.json beside it"):
        TokenizerOptions().build(vocab).apply_chat_template([{"role": "user", "content": "hi"}])
    assert load_vocab("qwen3").chat_template is None and tokenizer_for("qwen3").apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False) == "<|im_start|>user\nhi<|im_end|>\n"



def test_vocab_without_template_raises_a_helpful_error():
    tok = tokenizer_for("cl100k_base")
    with pytest.raises(ChatTemplateError, match="chat_template") as info:
        tok.apply_chat_template([{"role": "user", "content": "hi"}])
    assert isinstance(info.value, ValueError)


def test_template_argument_and_vocab_template():
    template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{{ eos_token }}{% endfor %}"
    tok = tokenizer_for("cl100k_base")
    messages = [{"role": "user", "content": "hi"}]
    rendered = tok.apply_chat_template(messages, tokenize=False, chat_template=template)
    assert rendered == "<|im_start|>user\nhi<|endoftext|>"
    assert tok.apply_chat_template(messages, chat_template=template)[-1] == 100257  # special tokens are matched
    base = load_vocab("gpt2")
    blob, ids, lengths = base.packed()
    vocab = Vocab.from_packed(blob=blob, ids=ids, lengths=lengths,
                              **{**base._fields(), "name": "gpt2-chat", "chat_template": template})
    again = pickle.loads(pickle.dumps(vocab))
    assert again.chat_template == template and vocab.renamed("x").chat_template == template
    for v in (vocab, again):
        rendered = TokenizerOptions().build(v).apply_chat_template(messages, tokenize=False)
        assert rendered == "<|im_start|>user\nhi<|endoftext|>"


def test_missing_jinja2_is_a_typed_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "jinja2", None)
    compile_chat_template.cache_clear()
    try:
        with pytest.raises(MissingDependencyError, match=r"wordsplit\[chat\]") as info:
            tokenizer_for("qwen3").apply_chat_template([{"role": "user", "content": "hi"}])
        assert isinstance(info.value, ImportError)
    finally:
        compile_chat_template.cache_clear()


# -- the environment ------------------------------------------------------------------------------


def render(template, messages=({"role": "user", "content": "x"},), **kwargs):
    return render_chat(template, list(messages), **kwargs)


def test_tojson_keeps_text_as_it_is():
    data = {"b": "<a & 'ü'>", "a": [1, None, True]}
    assert render("{{ d | tojson }}", d=data) == json.dumps(data, ensure_ascii=False)
    expected = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)
    assert render("{{ d | tojson(indent=2, sort_keys=true) }}", d=data) == expected


def test_raise_exception_is_a_chat_template_error():
    with pytest.raises(ChatTemplateError, match="only user and assistant"):
        render("{{ raise_exception('only user and assistant roles') }}")


def test_strftime_now():
    assert render("{{ strftime_now('%Y') }}") == datetime.now().strftime("%Y")


def test_trim_blocks_lstrip_blocks_and_loop_controls():
    template = ("  {% for m in messages %}\n{% if loop.index > 2 %}{% break %}{% endif %}"
                "{% if m.skip %}{% continue %}{% endif %}{{ m.content }}\n  {% endfor %}\n")
    messages = [{"role": "user", "content": c, "skip": c == "b"} for c in "abcd"]
    assert render(template, messages) == "a\n"


def test_dict_namespace_and_generation_block():
    assert render("{% set d = dict(a=1) %}{{ d.a }}{{ dict.fromkeys(['k']) | tojson }}") == '1{"k": null}'
    counted = "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}"
    assert render(counted) == "1"
    assert render("{% generation %}kept{% endgeneration %}!") == "kept!"
    with pytest.raises(ChatTemplateError, match="underscore"):
        render("{% set ns = namespace(_x=1) %}")


@pytest.mark.parametrize("template", [
    "{{ ''.__class__.__mro__ }}",
    "{{ messages.append(1) }}",
    "{{ cycler.__init__.__globals__ }}",
])
def test_the_sandbox_holds(template):
    with pytest.raises(ChatTemplateError):
        render(template)


def test_input_errors():
    with pytest.raises(ChatTemplateError, match="empty"):
        render("x", [])
    with pytest.raises(ChatTemplateError, match="dicts"):
        render("x", ["hello"])
    with pytest.raises(ChatTemplateError, match="JSON schemas"):
        render("x", tools=[print])
    with pytest.raises(ChatTemplateError, match="exclude"):
        render("{{ messages[0].content }}", add_generation_prompt=True, continue_final_message=True)
    with pytest.raises(ChatTemplateError, match="compile"):
        compile_chat_template("{% for %}")


def test_template_sees_only_plain_data():
    @dataclasses.dataclass
    class Point:
        x: int
        y: float

    import numpy as np

    value = plain_data({"p": Point(1, 2.0), "n": np.int64(3), "b": np.bool_(False), "o": object(), "t": (1, "a")})
    assert value == {"p": {"x": 1, "y": 2.0}, "n": 3, "b": False, "o": "<object>", "t": (1, "a")}
    assert type(value["n"]) is int and type(value["b"]) is bool


def test_import_wordsplit_does_not_import_jinja2_or_compat():
    code = "import sys, wordsplit; wordsplit.get_tokenizer('gpt2').encode('x'); " \
           "print(sorted(m for m in ('jinja2', 'wordsplit.chat', 'wordsplit.compat') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"
