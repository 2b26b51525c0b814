"""C++ checkpoint instrumentation: the anchor finder, the transformation, and the emitter's
canonical JSON compiled with the real g++ in the sandbox (byte-identical to Python's)."""

from __future__ import annotations

import json
import shutil

import pytest

from execbench.families.state import instrument_cpp
from execbench.families.state.jobs import exec_job, run
from execbench.families.state.canonical import dumps
from execbench.families.state.instrument_cpp import InstrumentError, find_loop, instrument, tokenize

TRICKY = r'''#include <iostream>
#define LOOP for (int z = 0; z < 1; ++z)
// for (int fake = 0; ; ) {
/* while (1) { */
int main() {
    const char* s = "for (;;) { while";
    const char* r = R"x(for ( { )x";
    char q = '{';
    int total = 0, i = 0;
    if (total == 0) for (i = 0; i < 4; ++i) {
        total += i; /* } */
    }
    std::cout << total << s[0] << r[0] << q << "\n";
    return 0;
}
'''


def test_tokenizer_skips_comments_literals_and_directives():
    texts = [t.text for t in tokenize(TRICKY)]
    assert "fake" not in texts and "z" not in texts
    assert texts.count("for") == 1 and "while" not in texts
    assert '"for (;;) { while"' in texts and "'{'" in texts and 'R"x(for ( { )x"' in texts


def test_anchor_and_wrapping_of_an_unbraced_sub_statement():
    anchor = find_loop(TRICKY, 10)
    assert anchor.wrap and anchor.kind == "for"
    assert TRICKY[anchor.body_open - 1] == "{" and TRICKY[anchor.body_close] == "}"
    post = instrument(TRICKY, 10, ["total", "i"], "post", 2)
    assert "if (total == 0) { for (i = 0; i < 4; ++i) {\n        ++execbench_checkpoint_count;" in post
    assert post.count("execbench_checkpoint::emit(") == 1 and "std::exit(0);\n    } }\n" in post
    # deleting the inserted text gives the clean program back
    inside = instrument(TRICKY, 10, ["total"], "inside", 3)
    rest = inside.replace(instrument_cpp.HEADER, "", 1)
    start = rest.index("\n        ++execbench_checkpoint_count;")
    end = rest.index("\n        }", start) + len("\n        }")
    assert rest[:start] + rest[end:] == TRICKY


def test_refusals():
    with pytest.raises(InstrumentError, match="not a braced block"):
        find_loop("int main() {\n  for (int i = 0; i < 3; ++i) f(i);\n}\n", 2)
    with pytest.raises(InstrumentError, match="do-while"):
        find_loop("int main() {\n  do {\n  } while (x);\n}\n", 3)
    with pytest.raises(InstrumentError, match="no for/while keyword on line 1"):
        find_loop(TRICKY, 1)
    with pytest.raises(Exception, match="not a variable name"):
        instrument(TRICKY, 10, ["a[0]"], "inside", 1)


PROGRAM = r'''#include <array>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

int main() {
    std::vector<int> v = {3, -1, 2};
    std::map<std::string, double> m = {{"b", 0.1}, {"a", 1e16}};
    std::set<int> s = {5, 1, 3};
    std::unordered_map<int, std::vector<std::pair<int, bool>>> u = {{10, {{1, true}}}, {9, {}}};
    std::string text = "q\"\\\n\t\x01\xc3\xa9";
    char ch = 'x';
    double d1 = 1e-05, d2 = -0.0, d3 = 123.456, d4 = 1.5e300, d5 = 2.0 / 3.0, d6 = 1e16, d7 = 0.0001, d8 = 5e-324;
    float fl = 0.1f;
    long long big = 9007199254740993LL;
    unsigned long long ub = 18446744073709551615ULL;
    bool flag = true;
    std::tuple<int, std::string, double> tup{1, "t", 2.5};
    std::array<long long, 2> arr{7, 8};
    int carr[3] = {4, 5, 6};
    std::deque<char> dq = {'a', 'b'};
    std::multiset<int> ms = {2, 2, 1};
    std::unordered_set<int> us = {30, 10, 20};
    std::map<int, int> keys = {{10, 1}, {9, 2}};
    for (int i = 0; i < 3; ++i) {
        v.push_back(i);
    }
    return 0;
}
'''
FIELDS = ["v", "m", "s", "u", "text", "ch", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "fl", "big", "ub",
          "flag", "tup", "arr", "carr", "dq", "ms", "us", "keys"]
EXPECTED = {
    "v": [3, -1, 2, 0], "m": {"a": 1e16, "b": 0.1}, "s": [1, 3, 5], "u": {10: [[1, True]], 9: []},
    "text": "q\"\\\n\t\x01é", "ch": "x", "d1": 1e-05, "d2": -0.0, "d3": 123.456, "d4": 1.5e300, "d5": 2.0 / 3.0,
    "d6": 1e16, "d7": 0.0001, "d8": 5e-324, "fl": 0.10000000149011612, "big": 9007199254740993,
    "ub": 18446744073709551615, "flag": True, "tup": [1, "t", 2.5], "arr": [7, 8], "carr": [4, 5, 6],
    "dq": ["a", "b"], "ms": [1, 2, 2], "us": [10, 20, 30], "keys": {9: 2, 10: 1},
}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_cpp_emitter_writes_the_same_canonical_json_as_python():
    line = PROGRAM.splitlines().index("    for (int i = 0; i < 3; ++i) {") + 1
    inside = instrument_cpp.instrument(PROGRAM, line, FIELDS, "inside", 2)
    cc, program = run([
        exec_job("cc", ["g++", "-std=c++17", "-O0", "-o", "prog", "main.cpp"], files={"main.cpp": inside},
                 group="case", cpu=120, wall=240, memory_mb=4096),
        exec_job("run", ["./prog"], needs=["cc"], group="case", cpu=10, wall=30, memory_mb=1024),
    ])
    assert cc.ok, cc.stderr
    assert program.ok
    # what the Python emitter prints for the same values (int keys are sorted as ints, then
    # written as strings, exactly like json.dumps(sort_keys=True))
    python_line = json.dumps(EXPECTED, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert program.stdout.decode() == python_line + "\n"
    assert json.loads(program.stdout)["keys"] == {"9": 2, "10": 1} and dumps(json.loads(python_line))
