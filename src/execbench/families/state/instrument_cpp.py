"""C++ checkpoint instrumentation: a documented source transformation at the loop anchor.

The anchor is the first ``for`` or ``while`` keyword token on ``loop_line`` (1-based). A
small tokenizer skips comments, string/char literals (raw strings too) and preprocessor
lines, then finds the parenthesised loop header and the braced body (a body that is a
single unbraced statement, and ``do``-``while`` loops, are rejected with a reason).
Insertions, nothing else (deleting them gives back the clean source byte for byte):

1. a header after the last ``#include`` that precedes the first declaration: the standard
   includes it needs, ``long long execbench_checkpoint_count = 0;`` and the namespace
   ``execbench_checkpoint`` with ``json(value)`` overloads (canonical JSON, same text as the
   Python emitter: exact integers, ``bool`` as true/false, floating values as Python's
   ``repr`` of the double, ``char`` and ``std::string`` as JSON strings, vector/deque/array/
   C array/pair/tuple as lists, set/multiset/unordered_set as sorted lists, map/
   unordered_map as objects with keys sorted) and ``emit(fields)``, which flushes the
   program's own output, prints the object with its fields sorted by name on one line of
   stdout and flushes;
2. right after the body's ``{``, in both state arms: ``++execbench_checkpoint_count;``;
3. inside arm, after the increment: ``if (execbench_checkpoint_count == K) { emit(...);
   std::exit(0); }`` -- the state after K-1 complete iterations, before the body of
   iteration K (for a ``for`` loop, after its condition held and, from the second
   iteration on, after its increment expression ran);
4. post arm, right after the body's ``}``: ``if (execbench_checkpoint_count >= K) {
   emit(...); std::exit(0); }`` -- at the first exit of the loop once iteration K ran. When
   the loop is itself the unbraced sub-statement of an ``if``/``else``/``for``/``while``
   (the previous token is ``)``, ``else`` or ``do``), the loop and the check are wrapped in
   ``{ ... }`` so they stay one statement.

A variable declared in the ``for`` header is out of scope after the loop: naming it as a
field makes the post arm fail to compile, and the case is rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from execbench.contract import SourceError

COUNT = "execbench_checkpoint_count"
NS = "execbench_checkpoint"
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")

HEADER = r'''
// ---- checkpoint instrumentation (execbench): canonical JSON state emitter ----
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

long long execbench_checkpoint_count = 0;

namespace execbench_checkpoint {
std::string json(bool v);
std::string json(char v);
std::string json(const char* v);
std::string json(const std::string& v);
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0> std::string json(T v);
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0> std::string json(T v);
template <class A, class B> std::string json(const std::pair<A, B>& v);
template <class... T> std::string json(const std::tuple<T...>& v);
template <class T, class A> std::string json(const std::vector<T, A>& v);
template <class T, class A> std::string json(const std::deque<T, A>& v);
template <class T, std::size_t N> std::string json(const std::array<T, N>& v);
template <class T, std::size_t N> std::string json(const T (&v)[N]);
template <class T, class C, class A> std::string json(const std::set<T, C, A>& v);
template <class T, class C, class A> std::string json(const std::multiset<T, C, A>& v);
template <class T, class H, class E, class A> std::string json(const std::unordered_set<T, H, E, A>& v);
template <class K, class V, class C, class A> std::string json(const std::map<K, V, C, A>& v);
template <class K, class V, class H, class E, class A> std::string json(const std::unordered_map<K, V, H, E, A>& v);

// Floats are written as Python's repr of the double: the shortest digits that round-trip,
// fixed notation for exponents -4..15 (at least one decimal: "2.0"), else "1e+16", "1.5e-07".
inline std::string repr_double(double v) {
    if (!std::isfinite(v)) {
        std::fputs("checkpoint: a non-finite float is not serializable\n", stderr);
        std::exit(3);
    }
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string s(buf, res.ptr), sign;
    if (s[0] == '-') { sign = "-"; s.erase(0, 1); }
    std::size_t e = s.find('e');
    int exp = std::atoi(s.c_str() + e + 1);
    std::string digits;
    for (std::size_t i = 0; i < e; ++i) if (s[i] != '.') digits += s[i];
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    int n = static_cast<int>(digits.size());
    std::string out;
    if (exp >= -4 && exp < 16) {
        if (exp < 0) out = "0." + std::string(-exp - 1, '0') + digits;
        else if (n <= exp + 1) out = digits + std::string(exp + 1 - n, '0') + ".0";
        else out = digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    } else {
        out = digits.substr(0, 1);
        if (n > 1) out += "." + digits.substr(1);
        char tail[16];
        std::snprintf(tail, sizeof tail, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        out += tail;
    }
    return sign + out;
}

inline std::string json(bool v) { return v ? "true" : "false"; }
inline std::string json(const std::string& v) {
    std::string out = "\"";
    for (unsigned char c : v) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    char hex[8];
                    std::snprintf(hex, sizeof hex, "\\u%04x", c);
                    out += hex;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}
inline std::string json(char v) { return json(std::string(1, v)); }
inline std::string json(const char* v) { return json(std::string(v)); }
template <class T, std::enable_if_t<std::is_integral_v<T>, int>> std::string json(T v) { return std::to_string(v); }
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int>> std::string json(T v) {
    return repr_double(static_cast<double>(v));
}
template <class It> std::string list(It first, It last) {
    std::string out = "[";
    for (It it = first; it != last; ++it) {
        if (it != first) out += ",";
        out += json(*it);
    }
    return out + "]";
}
template <class T> std::string sorted_list(std::vector<T> items) {
    std::sort(items.begin(), items.end());
    return list(items.begin(), items.end());
}
template <class A, class B> std::string json(const std::pair<A, B>& v) {
    return "[" + json(v.first) + "," + json(v.second) + "]";
}
template <class... T> std::string json(const std::tuple<T...>& v) {
    std::string out;
    std::apply([&out](const auto&... item) { ((out += (out.empty() ? "" : ",") + json(item)), ...); }, v);
    return "[" + out + "]";
}
template <class T, class A> std::string json(const std::vector<T, A>& v) { return list(v.begin(), v.end()); }
template <class T, class A> std::string json(const std::deque<T, A>& v) { return list(v.begin(), v.end()); }
template <class T, std::size_t N> std::string json(const std::array<T, N>& v) { return list(v.begin(), v.end()); }
template <class T, std::size_t N> std::string json(const T (&v)[N]) { return list(v, v + N); }
template <class T, class C, class A> std::string json(const std::set<T, C, A>& v) {
    return sorted_list(std::vector<T>(v.begin(), v.end()));
}
template <class T, class C, class A> std::string json(const std::multiset<T, C, A>& v) {
    return sorted_list(std::vector<T>(v.begin(), v.end()));
}
template <class T, class H, class E, class A> std::string json(const std::unordered_set<T, H, E, A>& v) {
    return sorted_list(std::vector<T>(v.begin(), v.end()));
}
inline std::string key(const std::string& k) { return json(k); }
inline std::string key(char k) { return json(k); }
inline std::string key(bool k) { return json(k ? "true" : "false"); }
template <class K> std::string key(const K& k) {
    static_assert(std::is_integral_v<K> || std::is_floating_point_v<K>,
                  "checkpoint: map keys must be strings, chars, bools or numbers");
    return "\"" + json(k) + "\"";
}
template <class M> std::string object(const M& m) {
    std::vector<const typename M::value_type*> items;
    for (const auto& kv : m) items.push_back(&kv);
    std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
    std::string out = "{";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ",";
        out += key(items[i]->first) + ":" + json(items[i]->second);
    }
    return out + "}";
}
template <class K, class V, class C, class A> std::string json(const std::map<K, V, C, A>& v) { return object(v); }
template <class K, class V, class H, class E, class A> std::string json(const std::unordered_map<K, V, H, E, A>& v) {
    return object(v);
}
// Print {"field":value,...} (fields sorted by name) as one line of stdout, after the program's own output.
inline void emit(std::vector<std::pair<std::string, std::string>> fields) {
    std::sort(fields.begin(), fields.end());
    std::string out = "{";
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ",";
        out += json(fields[i].first) + ":" + fields[i].second;
    }
    out += "}\n";
    std::fflush(stdout);
    std::cout << out;
    std::cout.flush();
}
}  // namespace execbench_checkpoint
// ---- end of checkpoint instrumentation header ----
'''

PROBE_HEADER = r'''
// ---- loop probe (execbench, never shown): writes the loop's iteration count at exit ----
#include <cstdio>
long long execbench_checkpoint_count = 0;
struct execbench_probe_t {
    ~execbench_probe_t() {
        if (FILE* f = std::fopen("checkpoint_probe.txt", "w")) {
            std::fprintf(f, "%lld\n", execbench_checkpoint_count);
            std::fclose(f);
        }
    }
} execbench_probe;
'''


class InstrumentError(SourceError):
    """The loop cannot be instrumented (the message says why)."""


@dataclass(frozen=True)
class Token:
    kind: str  # "id", "punct", "other"
    text: str
    start: int
    line: int


_RAW = re.compile(r'(?:u8|u|U|L)?R"([^()\\ \t\n]{0,16})\(')


def _block_comment(source: str, i: int) -> tuple[int, int]:
    """(index after the ``/* ... */`` starting at ``i``, newlines inside it); an unclosed
    comment runs to the end of the source."""
    end = source.find("*/", i + 2)
    end = len(source) if end < 0 else end + 2
    return end, source.count("\n", i, end)


def tokenize(source: str) -> list[Token]:
    """Significant tokens of C++ source: identifiers/keywords, punctuation, other
    (numbers, literals). Comments, preprocessor lines and literal contents are skipped."""
    tokens: list[Token] = []
    i, n, line = 0, len(source), 1
    at_line_start = True
    while i < n:
        c = source[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "#" and at_line_start:  # preprocessor directive, with continuations
            while i < n and source[i] != "\n":
                if source[i] == "\\" and i + 1 < n and source[i + 1] == "\n":
                    line += 1
                    i += 2
                    continue
                if source.startswith("/*", i):
                    i, crossed = _block_comment(source, i)
                    line += crossed
                    continue
                if source.startswith("//", i):
                    while i < n and source[i] != "\n":
                        i += 1
                    break
                i += 1
            continue
        at_line_start = False
        if source.startswith("//", i):
            while i < n and source[i] != "\n":
                i += 1
            continue
        if source.startswith("/*", i):
            i, crossed = _block_comment(source, i)
            line += crossed
            continue
        raw = _RAW.match(source, i)
        if raw:
            close = ")" + raw.group(1) + '"'
            end = source.find(close, raw.end())
            end = n if end < 0 else end + len(close)
            tokens.append(Token("other", source[i:end], i, line))
            line += source.count("\n", i, end)
            i = end
            continue
        if c in "\"'":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            tokens.append(Token("other", source[i:j + 1], i, line))
            i = j + 1
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (source[j].isalnum() or source[j] == "_"):
                j += 1
            tokens.append(Token("id", source[i:j], i, line))
            i = j
            continue
        if c.isdigit() or (c == "." and i + 1 < n and source[i + 1].isdigit()):
            j = i
            while j < n and (source[j].isalnum() or source[j] in "._'" or
                             (source[j] in "+-" and source[j - 1] in "eEpP")):
                j += 1
            tokens.append(Token("other", source[i:j], i, line))
            i = j
            continue
        tokens.append(Token("punct", c, i, line))
        i += 1
    return tokens


def _match(tokens: list[Token], index: int, open_: str, close: str) -> int:
    depth = 0
    for j in range(index, len(tokens)):
        if tokens[j].text == open_ and tokens[j].kind == "punct":
            depth += 1
        elif tokens[j].text == close and tokens[j].kind == "punct":
            depth -= 1
            if depth == 0:
                return j
    raise InstrumentError(f"unbalanced {open_}{close} after offset {tokens[index].start}")


@dataclass(frozen=True)
class Anchor:
    keyword: int  # offset of the for/while keyword
    body_open: int  # offset just after the body's "{"
    body_close: int  # offset of the body's "}"
    wrap: bool  # the loop is an unbraced sub-statement: wrap loop + post check in braces
    kind: str


def find_loop(source: str, loop_line: int) -> Anchor:
    tokens = tokenize(source)
    for index, tok in enumerate(tokens):  # noqa: B007 - index and tok are used after the break
        if tok.line == loop_line and tok.kind == "id" and tok.text in ("for", "while"):
            break
    else:
        raise InstrumentError(f"no for/while keyword on line {loop_line}")
    if index + 1 >= len(tokens) or tokens[index + 1].text != "(":
        raise InstrumentError(f"the {tok.text} on line {loop_line} is not followed by '('")
    close = _match(tokens, index + 1, "(", ")")
    if close + 1 >= len(tokens):
        raise InstrumentError("the loop has no body")
    body = tokens[close + 1]
    if tok.text == "while" and body.text == ";":
        raise InstrumentError(f"the while on line {loop_line} ends a do-while loop (not supported)")
    if body.text != "{":
        raise InstrumentError(f"the body of the loop on line {loop_line} is not a braced block")
    end = _match(tokens, close + 1, "{", "}")
    previous = tokens[index - 1].text if index > 0 else ";"
    return Anchor(tok.start, body.start + 1, tokens[end].start, previous in (")", "else", "do"), tok.text)


def check_fields(fields: list[str]) -> list[str]:
    if not fields:
        raise SourceError("checkpoint fields must not be empty")
    for field in fields:
        if not isinstance(field, str) or not _FIELD.match(field) or field.startswith("execbench_"):
            raise SourceError(f"checkpoint field {field!r} is not a variable name or member path")
    if len(set(fields)) != len(fields):
        raise SourceError("checkpoint fields repeat a name")
    return list(fields)


def _line_indent(source: str, offset: int) -> str:
    start = source.rfind("\n", 0, offset) + 1
    line = source[start:]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _header_offset(source: str) -> int:
    """Offset just after the last #include line preceding the first significant token."""
    tokens = tokenize(source)
    first = tokens[0].start if tokens else len(source)
    best = 0
    for match in re.finditer(r"^[ \t]*#[ \t]*include\b.*$", source, flags=re.M):
        if match.start() < first:
            best = match.end() + 1 if match.end() < len(source) else match.end()
    return min(best, len(source))


def _splice(source: str, inserts: list[tuple[int, int, str]]) -> str:
    out, last = [], 0
    for offset, _, text in sorted(inserts, key=lambda item: (item[0], item[1])):
        out.append(source[last:offset])
        out.append(text)
        last = offset
    out.append(source[last:])
    return "".join(out)


def instrument(source: str, loop_line: int, fields: list[str], mode: str, iteration: int,
               *, line_directives: bool = False) -> str:
    """The instrumented program (the text shown). ``line_directives``: the text compiled, the
    same with ``#line`` directives (:func:`with_line_directives`)."""
    found = inserts(source, loop_line, fields, mode, iteration)
    if line_directives:
        found = with_line_directives(source, found, find_loop(source, loop_line).keyword)
    return _splice(source, found)


_CONTROL = {"if", "for", "while", "switch", "catch"}
_SPECIFIERS = {"const", "noexcept", "override", "final", "mutable", "volatile", "&", "&&"}


def _function_close(source: str, keyword: int) -> int | None:
    """Offset of the ``}`` closing the innermost function (or lambda) body around offset
    ``keyword``; None when no such body is recognised."""
    tokens = tokenize(source)
    stack: list[int] = []
    at = next((i for i, tok in enumerate(tokens) if tok.start == keyword), None)
    if at is None:
        return None
    for i in range(at):
        tok = tokens[i]
        if tok.kind == "punct" and tok.text == "{":
            stack.append(i)
        elif tok.kind == "punct" and tok.text == "}" and stack:
            stack.pop()
    for open_ in reversed(stack):
        j = open_ - 1
        while j >= 0 and tokens[j].text in _SPECIFIERS:
            j -= 1
        if j < 0 or tokens[j].text not in (")", "]"):
            continue
        if tokens[j].text == ")":
            depth, k = 0, j
            while k >= 0:
                depth += {")": 1, "(": -1}.get(tokens[k].text, 0) if tokens[k].kind == "punct" else 0
                if depth == 0:
                    break
                k -= 1
            if k <= 0 or tokens[k - 1].text in _CONTROL:
                continue
        return tokens[_match(tokens, open_, "{", "}")].start
    return None


def with_line_directives(source: str, found: list[tuple[int, int, str]], keyword: int, name: str = "main.cpp"
                         ) -> list[tuple[int, int, str]]:
    """``found`` (the insertions around the loop at offset ``keyword``) with ``#line``
    directives, so that ``__LINE__``, ``__FILE__``, assertion messages and the debug
    information are the clean program's: the lines of an inserted block are numbered past
    the clean program's end, each its own number, and the text after a block continues under
    the clean line it belongs to. The ``}`` closing the function around the loop is numbered
    after every inserted line, so the inserted lines lie inside the function's line range,
    as they did: gcov then counts every line as it did without the directives (a line outside
    its function's range is counted differently)."""
    extra = source.count("\n") + 2
    out = []
    for offset, order, text in found:
        if "\n" not in text:
            out.append((offset, order, text))
            continue
        if text.strip() == f"++{COUNT};":  # the post arm's increment: end its block there (as the
            text = text.replace(f"++{COUNT};", f"if (++{COUNT}) {{}}")  # inside arm's check does), so no
            # block runs from an inserted line back to a clean one (gcov counts that line twice)
        resume = source.count("\n", 0, offset) + 1
        out.append((offset, order, f'\n#line {extra} "{name}"{text}\n#line {resume} "{name}"\n'))
        extra += text.count("\n") + 2
    close = _function_close(source, keyword)
    if close is not None:
        resume = source.count("\n", 0, close) + 1
        out.append((close, -1, f'\n#line {extra} "{name}"\n'))
        out.append((close + 1, -1, f'\n#line {resume} "{name}"\n'))
    return out


def inserts(source: str, loop_line: int, fields: list[str], mode: str, iteration: int,
            when: str = "") -> list[tuple[int, int, str]]:
    """The insertions of :func:`instrument` as ``(offset, order, text)`` (offsets in
    ``source``; ``when``, e.g. ``"arm == 1 && "``, is prefixed to the firing condition)."""
    if mode not in ("inside", "post"):
        raise ValueError(mode)
    if iteration < 1:
        raise InstrumentError("inside_iteration must be >= 1")
    if "execbench_checkpoint" in source:
        raise InstrumentError("the program already uses names starting with execbench_checkpoint")
    fields = check_fields(fields)
    anchor = find_loop(source, loop_line)
    body_indent = _line_indent(source, anchor.body_open)
    loop_indent = _line_indent(source, anchor.keyword)
    inner = body_indent + "    "
    fields_text = ", ".join(f'{{"{f}", {NS}::json({f})}}' for f in fields)
    fire = (f"{inner}    {NS}::emit({{{fields_text}}});\n"
            f"{inner}    std::exit(0);\n")
    increment = f"\n{inner}++{COUNT};"
    result: list[tuple[int, int, str]] = [(_header_offset(source), 0, HEADER)]
    if mode == "inside":
        result.append((anchor.body_open, 1,
                       increment + f"\n{inner}if ({when}{COUNT} == {iteration}) {{\n{fire}{inner}}}"))
    else:
        result.append((anchor.body_open, 1, increment))
        check = (f"\n{loop_indent}if ({when}{COUNT} >= {iteration}) {{\n"
                 f"{fire.replace(inner, loop_indent)}{loop_indent}}}")
        if anchor.wrap:
            result.append((anchor.keyword, 2, "{ "))
            check += " }"
        result.append((anchor.body_close + 1, 3, check))
    return result


def probe(source: str, loop_line: int) -> str:
    """A copy that counts the loop's iterations and writes the total to
    ``checkpoint_probe.txt`` at exit (never shown to a model)."""
    if "execbench_checkpoint" in source:
        raise InstrumentError("the program already uses names starting with execbench_checkpoint")
    anchor = find_loop(source, loop_line)
    return _splice(source, [(_header_offset(source), 0, PROBE_HEADER),
                            (anchor.body_open, 1, f" ++{COUNT};")])
