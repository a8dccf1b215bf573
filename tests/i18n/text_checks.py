"""Is this text, shown on a Chinese page, still English? Shared by the AppTest and browser walks.

A translated page may still show code, config keys, model names, Triton's own log and error
text, product names and the English names Triton engineers say (kept in the glossary). What
it may not show is English prose: a run of three or more ordinary English words.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u3400-\u9fff]")
# Names that stay English in every language: products, standards, Triton's own words.
NAMES = (
    "Triton Inference Server", "Triton Batching Lab", "NVIDIA", "Triton", "TensorRT", "PyTorch", "Python",
    "Streamlit", "Prometheus", "Kubernetes", "Chromium", "NIM", "GPU", "CPU", "HTTP", "gRPC", "JSON", "CSV",
    "UUID", "API", "URL", "ONNX", "nginx", "torch", "English", "Language",
    # Triton backend names, as config.pbtxt writes them.
    "onnxruntime", "tensorrt", "pytorch", "libtorch", "tensorflow", "openvino", "python",
)
# Code spans, URLs, and the original English name glossed in full-width brackets after a
# Chinese term (并发模型执行（concurrent model execution）), which readers search for in Triton's docs.
_CODE = re.compile(r"`[^`]*`|```.*?```|https?://\S+|(?<=[\u3400-\u9fff])（[A-Za-z][A-Za-z -]*）", re.S)
# Identifiers, paths, numbers, flags, quoted Triton messages and key=value pairs are code.
_CODEISH = re.compile(r"[^\s,;:!?()]*(?:[_/=<>\[\]{}#@0-9]|\w\.\w)[^\s,;:!?()]*|\b[A-Z][A-Z0-9_]+\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


@lru_cache(maxsize=1)
def kept_names() -> tuple[str, ...]:
    terms = yaml.safe_load((REPO / "lessons" / "glossary.yaml").read_text(encoding="utf-8"))["terms"]
    kept = {k for t in terms for k in t.get("keep", [])}
    # Longest first, so "Triton Inference Server" goes before "Triton".
    return tuple(sorted({*NAMES, *kept}, key=len, reverse=True))


def has_cjk(text: str) -> bool:
    return bool(CJK.search(text))


def _prose(text: str) -> str:
    text = _CODE.sub(" | ", text)
    for name in kept_names():
        text = re.sub(r"(?<![A-Za-z])" + re.escape(name) + r"(?![A-Za-z])", " | ", text, flags=re.I)
    return _CODEISH.sub(" | ", text)


def english_label(text: str) -> bool:
    """A widget label that is English: words left after code and names, and no Chinese."""
    return bool(_WORD.findall(_prose(text))) and not has_cjk(text)


def english_runs(text: str, *, min_words: int = 3) -> list[str]:
    """Runs of min_words or more English words left after code and kept names are removed."""
    text = _prose(text)
    runs: list[str] = []
    # Split at anything that is not a word or the space/comma between words of one phrase.
    for chunk in re.split(r"[^A-Za-z'’\- ,]+", text):
        words = _WORD.findall(chunk)
        if len(words) >= min_words:
            runs.append(" ".join(words))
    return runs


def reads_in(lang: str, text: str, english: str) -> bool:
    """Whether `text` is `english` as a page in `lang` shows it: the English itself in the source
    language; in another, some text that is not the English. gettext answers a msgid missing from
    a catalog with the English, so a check that the text is merely there passes on an empty one."""
    from app.i18n import SOURCE_LANGUAGE

    return text == english if lang == SOURCE_LANGUAGE else bool(text.strip()) and text != english


TEXT_KINDS = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success", "toast")
LABELLED = ("button", "radio", "selectbox", "multiselect", "text_input", "number_input", "slider", "select_slider",
            "checkbox", "toggle", "expander", "tabs", "metric", "text_area", "date_input", "color_picker")


def shown_texts(at) -> list[tuple[str, str]]:
    """(what, text) of everything a learner reads on the page, widget labels and options included."""
    out: list[tuple[str, str]] = []
    for kind in TEXT_KINDS:
        out += [(kind, str(e.value)) for e in getattr(at, kind, [])]
    for kind in LABELLED:
        for e in getattr(at, kind, []):
            label = getattr(e, "label", None)
            if label:
                out.append((f"{kind} label", str(label)))
            for option in getattr(e, "options", None) or []:
                out.append((f"{kind} option", str(option)))
            help_text = getattr(e, "help", None)
            if help_text:
                out.append((f"{kind} help", str(help_text)))
    return out


_PHRASE_BREAK = re.compile(r"[.;:,()!?\[\]“”\"'`|（）：，。]|\d[\d.,]*")
_PROSE_WORD = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*$")  # a word, not an identifier (max_batch_size)


def kept_english(text: str, english: str, *, min_words: int = 3) -> list[str]:
    """Phrases of min_words or more words of `english` (split at punctuation and numbers) that `text`
    still holds as they are, outside code, identifiers and kept names: English left in a translation,
    whatever the language's script."""
    phrases = {" ".join(p.split()) for p in _PHRASE_BREAK.split(_CODE.sub(" | ", english))}
    flat = " ".join(_prose(text).split())
    return sorted(p for p in phrases if sum(bool(_PROSE_WORD.match(w)) for w in p.split()) >= min_words and p in flat)
