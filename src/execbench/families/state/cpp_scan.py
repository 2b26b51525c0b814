"""A small structural reading of C++ source for the state family's automatic choice and
state meter: blocks, statements, variable declarations and loops.

It is not a C++ parser. It reads the token stream of :func:`instrument_cpp.tokenize`
(comments, literals and preprocessor lines already skipped) the way the programs of a
benchmark corpus are written: statements in braced blocks, declarations that start with a
type (a builtin type word, ``auto``, a ``std::`` name, a type the file declares with
``struct``/``class``/``enum``/``typedef``/``using``, or a name followed by ``<``, a name, ``*``
or ``&`` and then a declarator), braced loop bodies. What it cannot read it leaves out:
a declaration it does not recognise is not a candidate field and is not measured; the
programs built from its reading are compiled, and a compile error is reported, never
guessed around.

Results (all offsets are character offsets in the source):

* :attr:`Scan.statements` -- the first offset of every statement directly inside a braced
  block of a function (function bodies, nested blocks, loop and ``if`` bodies, lambda
  bodies): where the state meter's tick goes; plus :attr:`Scan.wraps`, unbraced
  sub-statements of ``if``/``else``/``for``/``while`` (start, end) that the meter braces;
* :attr:`Scan.decls` -- variables: name, the offset right after the declaring statement
  (or the body's ``{`` for loop-header variables, or the function body's ``{`` for
  parameters), the block that scopes it, and whether it is a global;
* :attr:`Scan.loops` -- ``for``/``while`` loops with braced bodies, first on their line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from execbench.families.state.instrument_cpp import Token, tokenize

BUILTIN_TYPES = frozenset(
    "int long short char bool double float unsigned signed void auto size_t ssize_t wchar_t char16_t "
    "char32_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t ptrdiff_t string".split())
SPECIFIERS = frozenset("static const constexpr volatile register thread_local mutable inline extern "
                       "typename".split())
STATEMENT_WORDS = frozenset("return break continue goto throw delete new case default else do if for while "
                            "switch try catch using typedef namespace template struct class union enum "
                            "public private protected operator sizeof static_assert friend".split())


@dataclass
class Block:
    open: int  # token index of "{"
    close: int  # token index of "}"
    parent: Block | None
    function: bool  # a function or lambda body


@dataclass(frozen=True)
class Decl:
    name: str
    at: int  # offset where the variable is declared and in scope (after its statement)
    block: Block | None  # None: namespace scope (a global)
    token: int  # token index of the name


@dataclass(frozen=True)
class CppLoop:
    line: int
    keyword: int  # token index of for/while
    body_open: int  # token index of "{"
    body_close: int  # token index of "}"
    block: Block  # the block the loop statement is in
    header_names: tuple[str, ...]  # variables declared in the header (out of scope after it)
    targets: tuple[str, ...]  # names the header assigns that were declared before (for (i = 0; ...))


@dataclass
class Scan:
    source: str
    tokens: list[Token]
    blocks: list[Block] = field(default_factory=list)
    statements: list[int] = field(default_factory=list)
    wraps: list[tuple[int, int]] = field(default_factory=list)
    decls: list[Decl] = field(default_factory=list)
    loops: list[CppLoop] = field(default_factory=list)
    types: set[str] = field(default_factory=set)

    def end_of(self, index: int) -> int:
        """Offset just after token ``index``."""
        tok = self.tokens[index]
        return tok.start + len(tok.text)


class _Reader:
    def __init__(self, source: str) -> None:
        self.scan = Scan(source, tokenize(source))
        self.t = self.scan.tokens
        self.n = len(self.t)
        self.match: dict[int, int] = {}
        stack: list[int] = []
        pairs = {")": "(", "]": "[", "}": "{"}
        for i, tok in enumerate(self.t):
            if tok.kind != "punct":
                continue
            if tok.text in "([{":
                stack.append(i)
            elif tok.text in ")]}":
                while stack and self.t[stack[-1]].text != pairs[tok.text]:
                    stack.pop()
                if stack:
                    self.match[stack.pop()] = i
        for i, tok in enumerate(self.t):  # type names the file declares
            if tok.text in ("struct", "class", "enum", "union") and i + 1 < self.n and self.t[i + 1].kind == "id":
                j = i + 2 if self.t[i + 1].text != "class" else i + 2  # enum class X
                name = self.t[i + 1].text if self.t[i + 1].text != "class" else (self.t[j].text if j < self.n else "")
                self.scan.types.add(name)
            if tok.text == "using" and i + 2 < self.n and self.t[i + 1].kind == "id" and self.t[i + 2].text == "=":
                self.scan.types.add(self.t[i + 1].text)
            if tok.text == "typedef":
                j = i + 1
                while j < self.n and self.t[j].text != ";":
                    j = self.match.get(j, j) + 1 if self.t[j].text in "([{" else j + 1
                if j - 1 > i and self.t[j - 1].kind == "id":
                    self.scan.types.add(self.t[j - 1].text)
            if tok.text == "template" and i + 1 < self.n and self.t[i + 1].text == "<":
                j = i + 2
                depth = 1
                while j < self.n and depth:
                    if self.t[j].text == "<":
                        depth += 1
                    elif self.t[j].text == ">":
                        depth -= 1
                    elif self.t[j].text in ("class", "typename") and j + 1 < self.n and self.t[j + 1].kind == "id":
                        self.scan.types.add(self.t[j + 1].text)
                    j += 1

    def text(self, i: int) -> str:
        return self.t[i].text if 0 <= i < self.n else ""

    def close_of(self, i: int) -> int:
        return self.match.get(i, self.n - 1)

    # -- scopes ---------------------------------------------------------------------------

    def namespace_scope(self, i: int, end: int, in_class: bool = False) -> None:
        """Declarations at namespace scope from token ``i`` to ``end`` (in a class body:
        only its member functions' bodies; members are reached through the object)."""
        while i < end:
            word = self.text(i)
            if word == "namespace":
                j = i + 1
                while j < end and self.text(j) != "{" and self.text(j) != ";":
                    j += 1
                if self.text(j) == "{":
                    self.namespace_scope(j + 1, self.close_of(j), in_class)
                    i = self.close_of(j) + 1
                else:
                    i = j + 1
                continue
            if word == "template" and self.text(i + 1) == "<":
                i = self._skip_angles(i + 1)
                continue
            if word in ("public", "private", "protected") and self.text(i + 1) == ":":
                i += 2
                continue
            if word in ("struct", "class", "union", "enum"):
                j = i + 1
                while j < end and self.text(j) not in ("{", ";"):
                    j += 1
                if self.text(j) == "{":
                    close = self.close_of(j)
                    if word != "enum":
                        self.namespace_scope(j + 1, close, in_class=True)  # member functions' bodies
                    i = close + 1
                    if self.text(i) == ";":
                        i += 1
                        continue
                    # struct S {...} a, b;: the declarators after the body are globals
                    if not in_class:
                        self._declarators(i, end, None, at_namespace=True)
                    i = self._statement_end(i, end) + 1
                else:
                    i = j + 1
                continue
            # a function definition: ... name ( params ) [const|noexcept|override|-> T|: inits] { body }
            j, paren = i, None
            while j < end and self.text(j) not in (";", "{", "="):
                if self.text(j) == "(" and paren is None:
                    paren = j
                    j = self.close_of(j) + 1
                    continue
                if self.text(j) in ("(", "["):
                    j = self.close_of(j) + 1
                    continue
                j += 1
            if self.text(j) == "{" and paren is not None:
                self.function_body(j, self._params(paren))
                i = self.close_of(j) + 1
                continue
            if paren is not None and self.text(j) == ";" and self.t[paren - 1].kind == "id" and \
                    self._looks_like_type(i) and not self._is_ctor_call(paren):
                i = j + 1  # a function declaration
                continue
            stop = self._statement_end(i, end)
            if not in_class and self._is_declaration(i, stop):
                self._declaration(i, stop, None, at_namespace=True)
            i = stop + 1

    def _is_ctor_call(self, paren: int) -> bool:
        """``vector<int> g(100);`` at namespace scope: a variable (its parenthesis holds a
        value, not a parameter list: a number, a literal or nothing typed)."""
        close = self.close_of(paren)
        inner = self.t[paren + 1:close]
        return bool(inner) and inner[0].kind == "other"

    def function_body(self, open_: int, params: list[tuple[str, int]]) -> None:
        block = Block(open_, self.close_of(open_), self._current, True)
        self.scan.blocks.append(block)
        at = self.scan.end_of(open_)
        for name, tok in params:
            self.scan.decls.append(Decl(name, at, block, tok))
        self._body(block)

    _current: Block | None = None

    def _body(self, block: Block) -> None:
        saved, self._current = self._current, block
        i = block.open + 1
        while i < block.close:
            i = self.statement(i, block, braced=True)
        self._current = saved

    def statement(self, i: int, block: Block, braced: bool) -> int:
        """Read the statement starting at token ``i`` (inside ``block``); the index after it."""
        word = self.text(i)
        if word in ("case", "default"):
            j = i + 1
            while j < block.close and not (self.text(j) == ":" and self.text(j + 1) != ":" and self.text(j - 1) != ":"):
                j += 1
            return j + 1
        if word == ";":
            return i + 1
        if braced:
            self.scan.statements.append(self.t[i].start)
        if word == "{":
            inner = Block(i, self.close_of(i), block, False)
            self.scan.blocks.append(inner)
            self._body(inner)
            return inner.close + 1
        if word in ("if", "switch", "while") or (word == "for" and self.text(i + 1) == "("):
            head = i + 1
            if self.text(head) == "constexpr":
                head += 1
            close = self.close_of(head)
            if word == "for" or word == "while":
                return self._loop(i, head, close, block)
            j = self._sub(close + 1, block)
            if word == "if" and self.text(j) == "else":
                j = self._sub(j + 1, block)
            return j
        if word == "do":
            j = self._sub(i + 1, block)
            if self.text(j) == "while":
                j = self.close_of(j + 1) + 1
            return j + 1 if self.text(j) == ";" else j
        if word == "try":
            j = self._sub(i + 1, block)
            while self.text(j) == "catch":
                j = self._sub(self.close_of(j + 1) + 1, block)
            return j
        if word in ("struct", "class", "union", "enum") or (word == "using" and self.text(i + 1) == "namespace"):
            return self._statement_end(i, block.close) + 1
        stop = self._statement_end(i, block.close)
        self._lambdas(i, stop)
        if self._is_declaration(i, stop):
            self._declaration(i, stop, block, at_namespace=False)
        return stop + 1

    def _sub(self, i: int, block: Block) -> int:
        """A sub-statement of if/else/for/while: braced, or wrapped by the meter."""
        if self.text(i) == "{":
            return self.statement(i, block, braced=False)
        j = self.statement(i, block, braced=False)
        if i < self.n and j - 1 < self.n and self.text(i) not in ("if", "for", "while", "do", "switch", "try", ";"):
            self.scan.wraps.append((self.t[i].start, self.scan.end_of(j - 1)))
        elif self.text(i) in ("if", "for", "while", "switch"):
            self.scan.wraps.append((self.t[i].start, self.scan.end_of(j - 1)))
        return j

    def _loop(self, i: int, head: int, close: int, block: Block) -> int:
        body = close + 1
        header_names: list[tuple[str, int]] = []
        targets: list[str] = []
        if self.text(i) == "for":
            colon = self._range_colon(head, close)
            first_semi = self._find(head + 1, close, ";")
            init_end = colon if colon is not None else (first_semi if first_semi is not None else close)
            if self._is_declaration(head + 1, init_end):
                header_names = self._names_of(head + 1, init_end)
            elif colon is None:
                for j in range(head + 1, init_end):
                    if self.t[j].kind == "id" and self.text(j + 1) == "=":
                        targets.append(self.text(j))
        if self.text(body) != "{":
            j = self._sub(body, block)
            return j
        inner = Block(body, self.close_of(body), block, False)
        self.scan.blocks.append(inner)
        at = self.scan.end_of(body)
        for name, tok in header_names:
            self.scan.decls.append(Decl(name, at, inner, tok))
        if not any(tok.line == self.t[i].line and tok.text in ("for", "while") and k < i
                   for k, tok in enumerate(self.t[max(0, i - 50):i], start=max(0, i - 50))):
            self.scan.loops.append(CppLoop(self.t[i].line, i, body, inner.close, block,
                                           tuple(n for n, _ in header_names), tuple(targets)))
        self._body(inner)
        return inner.close + 1

    def _range_colon(self, head: int, close: int) -> int | None:
        j = head + 1
        while j < close:
            if self.text(j) in ("(", "[", "{"):
                j = self.close_of(j) + 1
                continue
            if self.text(j) == ";":
                return None
            if self.text(j) == ":" and self.text(j + 1) != ":" and self.text(j - 1) != ":":
                return j
            j += 1
        return None

    def _find(self, i: int, end: int, text: str) -> int | None:
        while i < end:
            if self.text(i) in ("(", "[", "{"):
                i = self.close_of(i) + 1
                continue
            if self.text(i) == text:
                return i
            i += 1
        return None

    def _lambdas(self, i: int, stop: int) -> None:
        """Lambda bodies inside a statement are function bodies (their parameters included)."""
        j = i
        while j < stop:
            if self.text(j) == "{" and self.text(j - 1) in (")", "]", "mutable"):
                params: list[tuple[str, int]] = []
                if self.text(j - 1) == ")":
                    k = j - 1
                    opener = next((o for o, c in self.match.items() if c == k), None)
                    if opener is not None:
                        params = self._params(opener)
                self.function_body(j, params)
                j = self.close_of(j) + 1
                continue
            j += 1

    def _statement_end(self, i: int, end: int) -> int:
        """Token index of the ``;`` ending the statement at ``i`` (brackets skipped)."""
        j = i
        while j < end:
            if self.text(j) in ("(", "[", "{"):
                j = self.close_of(j) + 1
                continue
            if self.text(j) == ";":
                return j
            j += 1
        return end

    def _skip_angles(self, i: int) -> int:
        depth = 0
        j = i
        while j < self.n:
            if self.text(j) == "<":
                depth += 1
            elif self.text(j) == ">":
                depth -= 1
                if depth == 0:
                    return j + 1
            elif self.text(j) in ("(", "["):
                j = self.close_of(j)
            elif self.text(j) in (";", "{"):
                return j
            j += 1
        return j

    # -- declarations ----------------------------------------------------------------------

    def _type_end(self, i: int, end: int) -> int | None:
        """Index after the type that starts at ``i`` (specifiers included), or None."""
        j = i
        while j < end and self.text(j) in SPECIFIERS:
            j += 1
        start = j
        words = 0
        while j < end and self.text(j) in BUILTIN_TYPES and self.text(j) != "string":
            j += 1
            words += 1
        if words:
            while j < end and self.text(j) in SPECIFIERS:
                j += 1
            return j
        if j >= end or self.t[j].kind != "id" or self.text(j) in STATEMENT_WORDS:
            return None
        # a (qualified) name with template arguments
        while True:
            if self.text(j) == "::":
                j += 1
            if j >= end or self.t[j].kind != "id":
                return None
            j += 1
            if self.text(j) == "<":
                j = self._skip_angles(j)
            if self.text(j) == ":" and self.text(j + 1) == ":":
                j += 2
                continue
            break
        name = self.text(start)
        known = (name in BUILTIN_TYPES or name == "std" or name in self.scan.types or self.text(start + 1) == "<")
        nxt = self.text(j)
        if not known:
            # Foo x; Foo* p = ...; Foo& r = ...;  (not: a * b; a & b;)
            if not (self.t[j].kind == "id" if j < end else False) and not (
                    nxt in ("*", "&") and j + 1 < end and self.t[j + 1].kind == "id" and
                    self.text(j + 2) in ("=", ";", ",", "(", "{", "[")):
                return None
        while j < end and self.text(j) in SPECIFIERS:
            j += 1
        return j

    def _looks_like_type(self, i: int) -> bool:
        return self._type_end(i, self.n) is not None

    def _is_declaration(self, i: int, stop: int) -> bool:
        j = self._type_end(i, stop)
        if j is None or j >= stop:
            return False
        while j < stop and self.text(j) in ("*", "&", "const"):
            j += 1
        if self.text(j) == "[":  # structured binding
            return self.text(i) in ("auto", "const", "static") or self.text(j - 1) in ("auto", "&")
        return j < stop and self.t[j].kind == "id" and self.text(j + 1) in ("=", ";", ",", "(", "{", "[", ":", "")\
            or (j < stop and self.t[j].kind == "id" and j + 1 == stop)

    def _names_of(self, i: int, stop: int) -> list[tuple[str, int]]:
        """(name, token index) of the declarators of the declaration from ``i`` to ``stop``."""
        j = self._type_end(i, stop)
        if j is None:
            return []
        names = []
        while j < stop:
            while j < stop and self.text(j) in ("*", "&", "const"):
                j += 1
            if self.text(j) == "[":
                close = self.close_of(j)
                names += [(self.text(k), k) for k in range(j + 1, close) if self.t[k].kind == "id"]
                j = close + 1
            elif j < stop and self.t[j].kind == "id":
                names.append((self.text(j), j))
                j += 1
            else:
                break
            # array dimensions, initializer, up to the next top-level comma
            while j < stop and self.text(j) != ",":
                if self.text(j) in ("(", "[", "{"):
                    j = self.close_of(j) + 1
                    continue
                if self.text(j) == "<" and self.text(j - 1) != "<" and names and j > 0 and \
                        self.t[j - 1].kind == "id" and self.text(j - 1) in self.scan.types:
                    j = self._skip_angles(j)
                    continue
                j += 1
            j += 1
        return names

    def _declaration(self, i: int, stop: int, block: Block | None, at_namespace: bool) -> None:
        at = self.scan.end_of(stop) if stop < self.n else len(self.scan.source)
        for name, tok in self._names_of(i, stop):
            if at_namespace and self.text(tok + 1) == "(" and not self._is_ctor_call(tok + 1):
                continue  # a function declaration
            self.scan.decls.append(Decl(name, at, block, tok))

    def _declarators(self, i: int, end: int, block: Block | None, at_namespace: bool) -> None:
        stop = self._statement_end(i, end)
        at = self.scan.end_of(stop) if stop < self.n else len(self.scan.source)
        for k in range(i, stop):
            if self.t[k].kind == "id" and self.text(k - 1) in ("}", ",", "*", "&"):
                self.scan.decls.append(Decl(self.text(k), at, block, k))

    def _params(self, paren: int) -> list[tuple[str, int]]:
        """Parameter names of the list opening at token ``paren``."""
        close = self.close_of(paren)
        params: list[tuple[str, int]] = []
        j = paren + 1
        while j < close:
            k, depth, last_id = j, 0, None
            while k < close:
                text = self.text(k)
                if text in ("(", "[", "{"):
                    k = self.close_of(k) + 1
                    continue
                if text == "<":
                    depth += 1
                elif text == ">":
                    depth -= 1
                elif text == "," and depth <= 0:
                    break
                elif text == "=" and depth <= 0:
                    while k < close and not (self.text(k) == "," and depth <= 0):
                        if self.text(k) in ("(", "[", "{"):
                            k = self.close_of(k)
                        k += 1
                    break
                if self.t[k].kind == "id" and depth <= 0:
                    last_id = k
                k += 1
            if last_id is not None and last_id > j and self.text(last_id) not in BUILTIN_TYPES \
                    and self.text(last_id) not in SPECIFIERS:
                params.append((self.text(last_id), last_id))
            j = k + 1
        return params


def scan(source: str) -> Scan:
    """The structural reading of ``source`` (see the module docs)."""
    reader = _Reader(source)
    reader.namespace_scope(0, reader.n)
    return reader.scan


def in_scope(result: Scan, loop: CppLoop) -> list[Decl]:
    """Variables in scope both at the start of ``loop``'s body and right after the loop:
    globals declared before the loop's function, then the enclosing function's parameters
    and locals declared before the loop statement in a block that encloses it (inner
    declarations shadow outer ones); first declaration first."""
    keyword = result.tokens[loop.keyword].start
    chain: list[Block] = []
    block: Block | None = loop.block
    while block is not None:
        chain.append(block)
        if block.function:
            break
        block = block.parent
    seen: dict[str, Decl] = {}
    for decl in result.decls:
        if decl.at > keyword:
            continue
        if decl.block is None or decl.block in chain:
            seen[decl.name] = decl
    ordered = sorted(seen.values(), key=lambda d: (d.block is not None, d.at, d.token))
    return ordered


def live_names(result: Scan, loop: CppLoop) -> set[str]:
    """Identifiers read in the loop or after it, up to the end of its function."""
    end = loop.block.close
    block: Block | None = loop.block
    while block is not None and not block.function:
        block = block.parent
    if block is not None:
        end = block.close
    return {tok.text for tok in result.tokens[loop.keyword:end + 1] if tok.kind == "id"}
