"""Seeded perturbation of plain values: numbers, strings, containers (inputs and literals).

The perturbed value keeps the shape the program expects: the same types, strings over
the same alphabet (letters stay letters of the same case, digits stay digits, other
characters are kept), containers keep their element types and, when the original was
sorted or free of duplicates, stay so. Lengths may change by one. Whether the program
still accepts the new value is decided by running it, never here.
"""

from __future__ import annotations

import math
import random
import re
import string
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 8
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|-?[0-9]+|\s+|.", re.S)


@dataclass(frozen=True)
class Vocabulary:
    """Strings a program gives meaning to. ``tags`` are words it compares against or uses
    as keys (commands, modes, sizes): an input equal to one is swapped for another or kept,
    never misspelled. ``keep`` are its identifiers (method names dispatched by
    ``getattr``, ...): inputs equal to one stay."""

    tags: frozenset[str] = frozenset()
    keep: frozenset[str] = frozenset()


def perturb_int(value: int, rng: random.Random, *, keep_sign: bool = True, avoid: tuple[int, ...] = ()) -> int:
    """A nearby different integer: small steps for small values, 5-30% for large ones."""
    for _ in range(20):
        size = abs(value)
        if size < 10:
            delta = rng.choice((-2, -1, 1, 2, 3))
        else:
            delta = max(1, round(size * rng.uniform(0.05, 0.3))) * rng.choice((-1, 1))
        new = value + delta
        if keep_sign and value >= 0 and new < 0:
            new = value + abs(delta)
        if keep_sign and value < 0 and new >= 0:
            new = value - abs(delta)
        if new != value and new not in avoid:
            return new
    return value + 1 if value + 1 not in avoid else value + 2


def _decimals(value: float) -> int | None:
    text = repr(value)
    if "e" in text or "inf" in text or "nan" in text:
        return None
    return len(text.split(".", 1)[1]) if "." in text else 0


def perturb_float(value: float, rng: random.Random) -> float:
    """A nearby different float with no more decimals than the original (0.5 -> 0.7)."""
    if not math.isfinite(value):
        return value
    places = _decimals(value)
    for _ in range(20):
        if value == 0.0:
            new = rng.choice((0.5, 1.5, 2.0, 0.25))
        else:
            new = value * rng.uniform(0.6, 1.45)
        if places is not None:
            new = round(new, max(1, places))
        if new != value and (value >= 0) == (new >= 0):
            return new
    return value + 1.0


def _same_class(ch: str, rng: random.Random, pool: str) -> str:
    """Another character of ``ch``'s class, preferring characters already in ``pool``."""
    for cls in (string.ascii_lowercase, string.ascii_uppercase, string.digits):
        if ch in cls:
            own = sorted({c for c in pool if c in cls and c != ch})
            if own and rng.random() < 0.6:
                return rng.choice(own)
            choices = [c for c in cls if c != ch]
            return rng.choice(choices)
    return ch


def perturb_str(value: str, rng: random.Random, *, allow_length: bool = True) -> str:
    """Change one or two letters/digits; sometimes drop or repeat one character."""
    if not value:
        return value
    mutable = [i for i, ch in enumerate(value) if ch.isascii() and ch.isalnum()]
    for _ in range(20):
        chars = list(value)
        op = rng.random()
        if allow_length and len(value) > 1 and op < 0.2:
            del chars[rng.randrange(len(chars))]
        elif allow_length and op < 0.4:
            i = rng.randrange(len(chars))
            chars.insert(i, chars[i])
        elif mutable:
            for i in rng.sample(mutable, k=min(len(mutable), rng.choice((1, 1, 2)))):
                chars[i] = _same_class(chars[i], rng, value)
        else:
            continue
        new = "".join(chars)
        if new != value:
            return new
    return value


def _sorted(items: list) -> bool:
    try:
        return all(a <= b for a, b in zip(items, items[1:]))
    except TypeError:
        return False


def _unique(items: list) -> bool:
    try:
        return len(set(items)) == len(items)
    except TypeError:
        return False


def _sentence(value: str, rng: random.Random, vocab: Vocabulary) -> str | None:
    """A command string ("push 7; dup; add"): tags swapped now and then, numbers perturbed,
    everything else kept. None if the string is not made of the program's words."""
    tokens = _WORDS.findall(value)
    words = [t for t in tokens if t[:1].isalpha() or t[:1] == "_"]
    if len(words) < 2 or not any(w in vocab.tags for w in words):
        return None
    for _ in range(10):
        out = []
        for token in tokens:
            if token in vocab.tags and rng.random() < 0.25:
                others = sorted(vocab.tags - {token})
                out.append(rng.choice(others) if others else token)
            elif token.lstrip("-").isdigit() and rng.random() < 0.5:
                out.append(str(perturb_int(int(token), rng)))
            else:
                out.append(token)
        new = "".join(out)
        if new != value:
            return new
    return value


def perturb_value(value: Any, rng: random.Random, depth: int = 0, vocab: Vocabulary = Vocabulary()) -> Any:
    """A different value of the same shape (or the value itself if nothing can change).

    Strings the program gives meaning to follow ``vocab``; tuples keep their length
    (records: ``for a, b in pairs``), lists may grow or shrink by one.
    """
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, str):
        if value in vocab.keep:
            return value
        if value in vocab.tags:
            others = sorted(vocab.tags - {value})
            return rng.choice(others) if others and rng.random() < 0.5 else value
        spaced = value.split()
        if len(spaced) > 1 and all(w in vocab.tags for w in spaced):
            # a sentence of the program's own tokens ("o o| .|", "three one five")
            words = perturb_value(spaced, rng, depth + 1, vocab)
            return " ".join(words) if words else value
        sentence = _sentence(value, rng, vocab)
        if sentence is not None:
            return sentence
        return perturb_str(value, rng)
    if isinstance(value, bool):
        return (not value) if rng.random() < 0.5 else value
    if isinstance(value, int):
        return perturb_int(value, rng)
    if isinstance(value, float):
        return perturb_float(value, rng)
    if isinstance(value, (list, tuple)):
        items = list(value)
        # a list of 3+ sorted (or distinct) items is probably required so; a tuple is a record
        is_list = isinstance(value, list)
        was_sorted = is_list and len(items) > 2 and _sorted(items)
        was_unique = is_list and len(items) > 2 and _unique(items)
        if items:
            picks = [i for i in range(len(items)) if rng.random() < 0.5] or [rng.randrange(len(items))]
            for i in picks:
                items[i] = perturb_value(items[i], rng, depth + 1, vocab)
            roll = rng.random() if is_list else 1.0
            if roll < 0.2 and len(items) > 1:
                del items[rng.randrange(len(items))]
            elif roll < 0.4:
                items.insert(rng.randrange(len(items) + 1), perturb_value(rng.choice(items), rng, depth + 1, vocab))
        if was_sorted:
            try:
                items.sort()
            except TypeError:
                pass
        if was_unique:
            deduped: list = []
            for item in items:
                if item not in deduped:
                    deduped.append(item)
            items = deduped
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        out = dict(value)
        keys = list(out)
        if keys:
            for key in [k for k in keys if rng.random() < 0.5] or [rng.choice(keys)]:
                out[key] = perturb_value(out[key], rng, depth + 1, vocab)
        return out
    if isinstance(value, (set, frozenset)):
        items = perturb_value(sorted(value, key=repr), rng, depth + 1, vocab)
        try:
            return type(value)(items)
        except TypeError:
            return value
    return value


def render(value: Any) -> str:
    """Source text of a perturbed literal value, deterministic across processes (sets are
    written sorted, whatever the hash seed); round-trips through ``ast.literal_eval``
    except for ``frozenset(...)``."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("non-finite floats have no literal")
    if isinstance(value, (bool, int, float, str, bytes)) or value is None:
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(render(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render(k)}: {render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (set, frozenset)):
        items = sorted(value, key=lambda v: (type(v).__name__, repr(v)))
        body = "{" + ", ".join(render(v) for v in items) + "}"
        if isinstance(value, frozenset):
            return f"frozenset({body})" if value else "frozenset()"
        return body if value else "set()"
    raise ValueError(f"cannot write a {type(value).__name__} as a literal")
