"""C++ programs the state family builds from a case but never shows: the loop profile and
the snapshot copy of the automatic choice (:mod:`.choose_cpp`) and the state meter (which
can be both).

Each is the clean source plus insertions at offsets of the clean text (the reading of
:mod:`.cpp_scan`), so the program's own statements are unchanged. All of them write what
they measure to a file of the run's directory (never to stdout), from a static object's
destructor, which runs at the normal end of ``main`` and at ``std::exit``.

**State meter** (:func:`metered`): the C++ counterpart of :mod:`execbench.tracing.state`.

* An *event* is the start of a statement of the program's own source (every statement
  directly in a braced block of a function or lambda, and every unbraced sub-statement of
  ``if``/``else``/``for``/``while``, which the meter braces); Python's events are line
  events. ``line_events`` is the number of such events.
* S_t is what the program's variables reach: every variable of the source the reading
  recognises -- globals, and the parameters and locals of every active call -- each
  registered from its declaration to the end of its scope (a RAII guard after the
  declaring statement; a ``for`` header's variables from the start of each iteration's body).
* Sizes, as in Python: an arithmetic value, ``char``, ``bool``, an enum, a pointer or a
  ``std::string`` counts 1; a ``vector``, ``deque``, ``list``, ``array``, C array,
  ``set``/``multiset``/``unordered_set``, ``pair``/``tuple`` (Python's tuple), and the
  containers inside ``queue``/``stack``/``priority_queue``, count 1 plus their elements;
  a ``map``/``unordered_map`` 1 plus keys and values; an aggregate ``struct`` of up to 8
  fields 1 plus its fields (Python: an instance's ``__dict__``); any other class 1.
  Containers and structs are counted once per event (by address and type), so references
  and by-reference parameters are not double counted.
* The same budgeted sampling as Python: each time the walking work passes another
  ``budget`` slots the stride doubles, and ``state_load`` is the stride-weighted sum.

The meter program is compiled once per case, before the checkpoint is known, with the
clean program (build.py): it counts every instrumentable loop's iterations and the count at
its last exit, so its clean run on the long input is also the loop profile (the automatic
choice's, or the declared loop's iteration count); and it carries, for every such loop,
both checkpoints, selected at run time by ``EXECBENCH_STATE_ARM`` (``inside``/``post``;
anything else: the clean program), ``EXECBENCH_STATE_LOOP`` and ``EXECBENCH_STATE_K``. At a
checkpoint it exits where the arm's own program prints the state and exits (same places,
same order of insertions as :mod:`.instrument_cpp`), so its counts are the arm's; its
output must equal the arm's own output (the state line aside).

For a case without ``[checkpoint]`` the meter is also the automatic choice's snapshot copy
(``metered(..., snapshots=max_chars)``, issue 27: one compile fewer per case): every counted
loop carries the snapshot code of :func:`snapshot` for its candidates
(:func:`candidate_names`), at the same places, and ``EXECBENCH_SNAPSHOT = "j:K:index,..."``
turns it on for the ranked loops (nothing is measured in that run). Its snapshot file is the
snapshot copy's byte for byte (tested); a case whose meter cannot count its loops still
compiles a snapshot copy (:mod:`.choose_cpp`). Classic's declared cases compile the meter
without this code (the emitter's headers cost about 0.8 s of g++ each).
"""

from __future__ import annotations

from execbench.families.state import cpp_scan, instrument_cpp

METER_FILE = "execbench_state.json"
PROFILE_FILE = "checkpoint_profile.json"
SNAPSHOT_FILE = "checkpoint_snapshots.txt"
ARM_VARIABLE = "EXECBENCH_STATE_ARM"
SNAPSHOT_VARIABLE = "EXECBENCH_SNAPSHOT"   # the meter's snapshot run (automatic choice)

_INCLUDES = """#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <queue>
#include <set>
#include <stack>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
"""

METER_HEADER = _INCLUDES + r'''
// ---- state meter (execbench, never shown): |S_t| at every statement of the program ----
namespace execbench_state {
// the (address, type) pairs already counted in this walk: an open-addressing table (a
// std::set here cost ~0.1 s of g++ per meter at -O0 for its tree's instantiations)
struct walk {
    struct slot { const void* p; const std::type_info* t; };
    slot* table = nullptr;
    std::size_t mask = 0, used = 0;
    long long work = 0;
    walk() = default;
    walk(const walk&) = delete;
    walk& operator=(const walk&) = delete;
    ~walk() { std::free(table); }
    static std::size_t hash(const void* p, const std::type_info* t) {
        return reinterpret_cast<std::size_t>(p) * 31u + reinterpret_cast<std::size_t>(t);
    }
    bool first(const void* p, const std::type_info& t) {
        if (2 * (used + 1) > mask + 1) grow();
        std::size_t h = hash(p, &t) & mask;
        for (; table[h].t; h = (h + 1) & mask)
            if (table[h].p == p && table[h].t == &t) return false;
        table[h] = {p, &t};
        ++used;
        return true;
    }
    void grow() {
        std::size_t n = table ? 2 * (mask + 1) : 64;
        slot* fresh = static_cast<slot*>(std::calloc(n, sizeof(slot)));
        if (!fresh) std::abort();
        for (std::size_t i = 0; table && i <= mask; ++i)
            if (table[i].t) {
                std::size_t h = hash(table[i].p, table[i].t) & (n - 1);
                while (fresh[h].t) h = (h + 1) & (n - 1);
                fresh[h] = table[i];
            }
        std::free(table);
        table = fresh;
        mask = n - 1;
    }
};
template <class T> long long size(const T& v, walk& w);

struct any_t { template <class T> operator T() const; };
template <class T, class... A> auto braces(int) -> decltype(T{std::declval<A>()...}, std::true_type{});
template <class T, class... A> std::false_type braces(long);
template <class T, std::size_t... I> constexpr bool brace_n(std::index_sequence<I...>) {
    return decltype(braces<T, decltype((void)I, any_t{})...>(0))::value;
}
template <class T, std::size_t N> constexpr std::size_t arity() {
    if constexpr (N == 0) return 0;
    else if constexpr (brace_n<T>(std::make_index_sequence<N>{})) return N;
    else return arity<T, N - 1>();
}
template <class T> long long fields(const T& v, walk& w) {
    constexpr std::size_t n = arity<T, 8>();
    if (!w.first(&v, typeid(T))) return 0;
    w.work += 1 + static_cast<long long>(n);
    if constexpr (n == 1) { const auto& [a] = v; return 1 + size(a, w); }
    else if constexpr (n == 2) { const auto& [a, b] = v; return 1 + size(a, w) + size(b, w); }
    else if constexpr (n == 3) { const auto& [a, b, c] = v; return 1 + size(a, w) + size(b, w) + size(c, w); }
    else if constexpr (n == 4) {
        const auto& [a, b, c, d] = v; return 1 + size(a, w) + size(b, w) + size(c, w) + size(d, w); }
    else if constexpr (n == 5) {
        const auto& [a, b, c, d, e] = v;
        return 1 + size(a, w) + size(b, w) + size(c, w) + size(d, w) + size(e, w); }
    else if constexpr (n == 6) {
        const auto& [a, b, c, d, e, f] = v;
        return 1 + size(a, w) + size(b, w) + size(c, w) + size(d, w) + size(e, w) + size(f, w); }
    else if constexpr (n == 7) {
        const auto& [a, b, c, d, e, f, g] = v;
        return 1 + size(a, w) + size(b, w) + size(c, w) + size(d, w) + size(e, w) + size(f, w) + size(g, w); }
    else if constexpr (n == 8) {
        const auto& [a, b, c, d, e, f, g, h] = v;
        return 1 + size(a, w) + size(b, w) + size(c, w) + size(d, w) + size(e, w) + size(f, w) + size(g, w)
               + size(h, w); }
    else return 1;
}
template <class C> long long seq(const C& c, walk& w) {
    if (!w.first(&c, typeid(C))) return 0;
    long long total = 1, n = 0;
    for (const auto& x : c) { total += size(x, w); ++n; }
    w.work += n + 1;
    return total;
}
template <class M> long long dict(const M& m, walk& w) {
    if (!w.first(&m, typeid(M))) return 0;
    long long total = 1, n = 0;
    for (const auto& kv : m) { total += size(kv.first, w) + size(kv.second, w); ++n; }
    w.work += 2 * n + 1;
    return total;
}
template <class A> const typename A::container_type& inner(const A& a) {
    struct open : A { static const typename A::container_type& get(const A& x) { return x.*&open::c; } };
    return open::get(a);
}
template <class T, class = void> struct sizer {
    static long long of(const T& v, walk& w) {
        if constexpr (std::is_class_v<T> && std::is_aggregate_v<T> && !std::is_polymorphic_v<T>) return fields(v, w);
        else return 1;
    }
};
template <class C, class Tr, class A> struct sizer<std::basic_string<C, Tr, A>> {
    static long long of(const std::basic_string<C, Tr, A>&, walk&) { return 1; }
};
template <class T, class A> struct sizer<std::vector<T, A>> {
    static long long of(const std::vector<T, A>& v, walk& w) { return seq(v, w); } };
template <class T, class A> struct sizer<std::deque<T, A>> {
    static long long of(const std::deque<T, A>& v, walk& w) { return seq(v, w); } };
template <class T, class A> struct sizer<std::list<T, A>> {
    static long long of(const std::list<T, A>& v, walk& w) { return seq(v, w); } };
template <class T, std::size_t N> struct sizer<std::array<T, N>> {
    static long long of(const std::array<T, N>& v, walk& w) { return seq(v, w); } };
template <class T, std::size_t N> struct sizer<T[N]> {
    static long long of(const T (&v)[N], walk& w) { return seq(v, w); } };
template <class T, class C, class A> struct sizer<std::set<T, C, A>> {
    static long long of(const std::set<T, C, A>& v, walk& w) { return seq(v, w); } };
template <class T, class C, class A> struct sizer<std::multiset<T, C, A>> {
    static long long of(const std::multiset<T, C, A>& v, walk& w) { return seq(v, w); } };
template <class T, class H, class E, class A> struct sizer<std::unordered_set<T, H, E, A>> {
    static long long of(const std::unordered_set<T, H, E, A>& v, walk& w) { return seq(v, w); } };
template <class K, class V, class C, class A> struct sizer<std::map<K, V, C, A>> {
    static long long of(const std::map<K, V, C, A>& v, walk& w) { return dict(v, w); } };
template <class K, class V, class C, class A> struct sizer<std::multimap<K, V, C, A>> {
    static long long of(const std::multimap<K, V, C, A>& v, walk& w) { return dict(v, w); } };
template <class K, class V, class H, class E, class A> struct sizer<std::unordered_map<K, V, H, E, A>> {
    static long long of(const std::unordered_map<K, V, H, E, A>& v, walk& w) { return dict(v, w); } };
template <class A, class B> struct sizer<std::pair<A, B>> {
    static long long of(const std::pair<A, B>& v, walk& w) {
        if (!w.first(&v, typeid(v))) return 0;
        w.work += 3;
        return 1 + size(v.first, w) + size(v.second, w);
    }
};
template <class... T> struct sizer<std::tuple<T...>> {
    static long long of(const std::tuple<T...>& v, walk& w) {
        if (!w.first(&v, typeid(v))) return 0;
        w.work += 1 + static_cast<long long>(sizeof...(T));
        return std::apply([&w](const auto&... item) { return 1 + (0 + ... + size(item, w)); }, v);
    }
};
template <class T, class C> struct sizer<std::queue<T, C>> {
    static long long of(const std::queue<T, C>& v, walk& w) { return size(inner(v), w); } };
template <class T, class C> struct sizer<std::stack<T, C>> {
    static long long of(const std::stack<T, C>& v, walk& w) { return size(inner(v), w); } };
template <class T, class C, class P> struct sizer<std::priority_queue<T, C, P>> {
    static long long of(const std::priority_queue<T, C, P>& v, walk& w) { return size(inner(v), w); } };
template <class T> long long size(const T& v, walk& w) { return sizer<T>::of(v, w); }

struct entry { const void* p; long long (*size)(const void*, walk&); };
inline std::vector<entry>& stack() { static auto* s = new std::vector<entry>(); return *s; }
template <class T> long long thunk(const void* p, walk& w) { return size(*static_cast<const T*>(p), w); }
template <class T> struct var {
    explicit var(const T& v) { stack().push_back({&v, &thunk<T>}); }
    ~var() { stack().pop_back(); }
    var(const var&) = delete;
    var& operator=(const var&) = delete;
};
template <class T> var(const T&) -> var<T>;

long long counts[EXECBENCH_LOOPS], last_exit[EXECBENCH_LOOPS];   // the loop profile
// the run's key (EXECBENCH_METER_KEY), taken before main and wiped from the environment (and
// from /proc/self/environ): the measurement carries it, so a file the program wrote is told apart
inline std::string take_key() {
    char* v = std::getenv("EXECBENCH_METER_KEY");
    std::string key = v ? v : "";
    for (char* c = v; c && *c; ++c) *c = '0';
    unsetenv("EXECBENCH_METER_KEY");
    return key;
}
const std::string key = take_key();   // before the meter: destroyed after it
struct meter_t {
    long long events = 0, peak = 0, load = 0, stride = 1, samples = 0, work = 0;
    long long budget = EXECBENCH_STATE_BUDGET, next = EXECBENCH_STATE_BUDGET;
    ~meter_t() {
        if (FILE* f = std::fopen("execbench_state.json", "w")) {
            std::fprintf(f, "{\"key\": \"%s\", \"line_events\": %lld, \"peak_state\": %lld, \"state_load\": %lld, "
                            "\"state_stride\": %lld, \"state_samples\": %lld, \"state_work\": %lld",
                         key.c_str(), events, peak, load, stride, samples, work);
            for (int pass = 0; pass < 2; ++pass) {
                std::fputs(pass ? "], \"last_exit\": [" : ", \"counts\": [", f);
                for (int j = 0; j < EXECBENCH_LOOPS; ++j)
                    std::fprintf(f, "%s%lld", j ? ", " : "", pass ? last_exit[j] : counts[j]);
            }
            std::fputs("]}\n", f);
            std::fclose(f);
        }
    }
} meter;
const bool quiet = std::getenv("EXECBENCH_SNAPSHOT") != nullptr;   // a snapshot run measures nothing
inline void tick() {
    if (quiet) return;
    ++meter.events;
    if (meter.events % meter.stride) return;
    walk w;
    long long total = 0;
    for (const entry& e : stack()) total += e.size(e.p, w);
    meter.samples += 1;
    meter.work += w.work + 1;
    meter.load += total * meter.stride;
    if (total > meter.peak) meter.peak = total;
    while (meter.work > meter.next) { meter.stride *= 2; meter.next += meter.budget; }
}
inline int arm_from_env() {
    const char* a = std::getenv("EXECBENCH_STATE_ARM");
    if (a && std::strcmp(a, "inside") == 0) return 1;
    if (a && std::strcmp(a, "post") == 0) return 2;
    return 0;
}
inline long long number_from_env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::atoll(v) : -1;
}
const int arm = arm_from_env();
const long long loop = number_from_env("EXECBENCH_STATE_LOOP"), k = number_from_env("EXECBENCH_STATE_K");
// loop j: the start of an iteration's body (inside checkpoint) and its exit (post checkpoint)
inline void enter(int j) { ++counts[j]; if (arm == 1 && j == loop && counts[j] == k) std::exit(0); }
inline void leave(int j) { last_exit[j] = counts[j]; if (arm == 2 && j == loop && counts[j] >= k) std::exit(0); }
}  // namespace execbench_state
// ---- end of state meter header ----
'''

PROFILE_HEADER = _INCLUDES + r'''
// ---- loop profile (execbench, never shown): iterations and exits of every loop ----
long long execbench_checkpoint_counts[EXECBENCH_LOOPS];
long long execbench_checkpoint_last_exit[EXECBENCH_LOOPS];
struct execbench_checkpoint_profile_t {
    ~execbench_checkpoint_profile_t() {
        if (FILE* f = std::fopen("checkpoint_profile.json", "w")) {
            std::fputs("{\"counts\": [", f);
            for (int j = 0; j < EXECBENCH_LOOPS; ++j) std::fprintf(f, "%s%lld", j ? ", " : "", execbench_checkpoint_counts[j]);
            std::fputs("], \"last_exit\": [", f);
            for (int j = 0; j < EXECBENCH_LOOPS; ++j) std::fprintf(f, "%s%lld", j ? ", " : "", execbench_checkpoint_last_exit[j]);
            std::fputs("]}\n", f);
            std::fclose(f);
        }
    }
} execbench_checkpoint_profile;
'''

SNAPSHOT_HEADER = r'''
// ---- snapshots (execbench, never shown): the loop scope's variables at K-1, K and the exit ----
namespace execbench_checkpoint {
template <class T, class = void> struct ok : std::bool_constant<std::is_arithmetic_v<T>> {};
template <> struct ok<std::string> : std::true_type {};
template <> struct ok<const char*> : std::true_type {};
template <class T, class A> struct ok<std::vector<T, A>> : ok<T> {};
template <class T, class A> struct ok<std::deque<T, A>> : ok<T> {};
template <class T, std::size_t N> struct ok<std::array<T, N>> : ok<T> {};
template <class T, std::size_t N> struct ok<T[N]> : ok<T> {};
template <class A, class B> struct ok<std::pair<A, B>> : std::bool_constant<ok<A>::value && ok<B>::value> {};
template <class... T> struct ok<std::tuple<T...>> : std::bool_constant<(ok<T>::value && ...)> {};
template <class T, class C, class A> struct ok<std::set<T, C, A>> : ok<T> {};
template <class T, class C, class A> struct ok<std::multiset<T, C, A>> : ok<T> {};
template <class T, class H, class E, class A> struct ok<std::unordered_set<T, H, E, A>> : ok<T> {};
template <class K> struct ok_key : std::bool_constant<std::is_arithmetic_v<K>> {};
template <> struct ok_key<std::string> : std::true_type {};
template <class K, class V, class C, class A> struct ok<std::map<K, V, C, A>>
    : std::bool_constant<ok_key<K>::value && ok<V>::value> {};
template <class K, class V, class H, class E, class A> struct ok<std::unordered_map<K, V, H, E, A>>
    : std::bool_constant<ok_key<K>::value && ok<V>::value> {};
template <class T> std::string try_json(const T& v) {
    if constexpr (ok<std::remove_cv_t<T>>::value) return json(v);
    else return std::string();
}
// One snapshot: snapshot_lines(key).add("name", value)...write(). The lines are kept until
// write(), so a value that cannot be written (json() exits) leaves the file as it was; one
// member call per value, no temporaries at the call site (a cheap -O0 compile).
struct snapshot_lines {
    const char* key;
    std::string text;
    explicit snapshot_lines(const char* k) : key(k) {}
    template <class T> snapshot_lines& add(const char* name, const T& v) {
        std::string s = try_json(v);
        if (!s.empty() && s.size() <= EXECBENCH_MAX_CHARS) text.append(key).append("\t").append(name).append("\t").append(s).append("\n");
        return *this;
    }
    void write() const {
        if (FILE* f = std::fopen("checkpoint_snapshots.txt", "a")) {
            std::fputs(text.c_str(), f);
            std::fprintf(f, "%s\t\t\n", key);
            std::fclose(f);
        }
    }
};
}  // namespace execbench_checkpoint
'''


METER_SNAPSHOT_HEADER = r'''
// ---- the meter's snapshot run (automatic choice): EXECBENCH_SNAPSHOT = "j:K:index,..." ----
namespace execbench_state {
struct snapshot_t { long long k[EXECBENCH_LOOPS]; int index[EXECBENCH_LOOPS]; bool posted[EXECBENCH_LOOPS]; };
inline snapshot_t snapshot_from_env() {
    snapshot_t s{};
    for (int j = 0; j < EXECBENCH_LOOPS; ++j) s.index[j] = -1;
    const char* v = std::getenv("EXECBENCH_SNAPSHOT");
    while (v && *v) {
        char* end;
        long j = std::strtol(v, &end, 10);
        if (*end != ':') break;
        long long k = std::strtoll(end + 1, &end, 10);
        if (*end != ':') break;
        long index = std::strtol(end + 1, &end, 10);
        if (j >= 0 && j < EXECBENCH_LOOPS) { s.k[j] = k; s.index[j] = static_cast<int>(index); }
        if (*end != ',') break;
        v = end + 1;
    }
    return s;
}
snapshot_t snapshots = snapshot_from_env();
char snapshot_key[48];
// loop j's body starts: the key of its snapshot now ("index:before" at K-1, "index:inside" at K), else null
inline const char* snapshot_at_start(int j) {
    const snapshot_t& s = snapshots;
    if (s.index[j] < 0 || (counts[j] != s.k[j] - 1 && counts[j] != s.k[j])) return nullptr;
    std::snprintf(snapshot_key, sizeof snapshot_key, "%d:%s", s.index[j], counts[j] == s.k[j] ? "inside" : "before");
    return snapshot_key;
}
// loop j exits: "index:post" at its first exit once iteration K ran, else null
inline const char* snapshot_at_exit(int j) {
    snapshot_t& s = snapshots;
    if (s.index[j] < 0 || counts[j] < s.k[j] || s.posted[j]) return nullptr;
    s.posted[j] = true;
    std::snprintf(snapshot_key, sizeof snapshot_key, "%d:post", s.index[j]);
    return snapshot_key;
}
}  // namespace execbench_state
'''


def _check(source: str) -> None:
    for prefix in ("execbench_checkpoint", "execbench_state", "EXECBENCH_"):
        if prefix in source:
            raise instrument_cpp.InstrumentError(f"the program already uses names starting with {prefix}")


def loops(source: str) -> list[cpp_scan.CppLoop]:
    """The loops :func:`instrument_cpp.instrument` can instrument, in source order."""
    _check(source)
    result = cpp_scan.scan(source)
    good = []
    for loop in result.loops:
        try:
            anchor = instrument_cpp.find_loop(source, loop.line)
        except instrument_cpp.InstrumentError:
            continue
        if anchor.keyword == result.tokens[loop.keyword].start:
            good.append(loop)
    return good


def _exit_inserts(source: str, loop: cpp_scan.CppLoop, order: int, text: str) -> list[tuple[int, int, str]]:
    anchor = instrument_cpp.find_loop(source, loop.line)
    if anchor.wrap:
        return [(anchor.keyword, order - 1, "{ "), (anchor.body_close + 1, order, f" {text} }}")]
    return [(anchor.body_close + 1, order, f" {text}")]


def profile(source: str, chosen: list[cpp_scan.CppLoop]) -> str:
    """A copy counting every loop's iterations and the count at its last exit, written to
    ``checkpoint_profile.json`` at exit."""
    header = f"#define EXECBENCH_LOOPS {max(1, len(chosen))}\n" + PROFILE_HEADER
    inserts: list[tuple[int, int, str]] = [(instrument_cpp._header_offset(source), 0, header)]
    for j, loop in enumerate(chosen):
        anchor = instrument_cpp.find_loop(source, loop.line)
        inserts.append((anchor.body_open, 1, f" ++execbench_checkpoint_counts[{j}];"))
        inserts += _exit_inserts(source, loop, 3, f"execbench_checkpoint_last_exit[{j}] = "
                                                  f"execbench_checkpoint_counts[{j}];")
    return instrument_cpp._splice(source, inserts)


def snapshot(source: str, chosen: list[tuple[cpp_scan.CppLoop, int, list[str]]], max_chars: int) -> str:
    """A copy writing, for each ``(loop, K, names)``, the canonical JSON of the names at the
    start of iterations K-1 and K and at the first exit after K (``index:before``,
    ``index:inside``, ``index:post``) to ``checkpoint_snapshots.txt``; unserialisable or
    longer than ``max_chars`` values are left out."""
    header = (f"#define EXECBENCH_LOOPS {max(1, len(chosen))}\n#define EXECBENCH_MAX_CHARS {int(max_chars)}u\n"
              + PROFILE_HEADER + instrument_cpp.HEADER + SNAPSHOT_HEADER)
    inserts: list[tuple[int, int, str]] = [(instrument_cpp._header_offset(source), 0, header)]
    for j, (loop, k, names) in enumerate(chosen):
        anchor = instrument_cpp.find_loop(source, loop.line)
        count = f"execbench_checkpoint_counts[{j}]"
        before, inside, post = (_snap(f'"{j}:{when}"', names) for when in ("before", "inside", "post"))
        inserts.append((anchor.body_open, 1, f" ++{count}; if ({count} == {k - 1}) {before} if ({count} == {k}) {inside}"))
        inserts += _exit_inserts(source, loop, 3, f"if ({count} >= {k} && execbench_checkpoint_last_exit[{j}] == 0) "
                                                  f"{{ execbench_checkpoint_last_exit[{j}] = 1; {post} }}")
    return instrument_cpp._splice(source, inserts)


def read_snapshots(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """``checkpoint_snapshots.txt`` → ``{"0:inside": {name: {"json": text}}}`` (the layout
    :func:`choose._pick` reads); the first snapshot of a key wins."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    done: set[str] = set()
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        key, name, value = parts
        if key in done:
            continue
        if not name:
            done.add(key)
            out.setdefault(key, {})
            continue
        out.setdefault(key, {})[name] = {"json": value}
    return out


def candidate_names(source: str, counted: list[cpp_scan.CppLoop]) -> list[list[str]]:
    """Per loop, the automatic choice's candidate variables (:mod:`.choose_cpp`, step 3):
    in scope at both checkpoints and read in or after the loop, in declaration order."""
    scanned = cpp_scan.scan(source)
    by_keyword = {loop.keyword: loop for loop in scanned.loops}
    out = []
    for loop in counted:
        mine = by_keyword[loop.keyword]
        live = cpp_scan.live_names(scanned, mine)
        out.append([d.name for d in cpp_scan.in_scope(scanned, mine) if d.name in live])
    return out


def _snap(key: str, names: list[str]) -> str:
    """The statement writing one snapshot of ``names`` under ``key`` (a C++ expression)."""
    return (f"execbench_checkpoint::snapshot_lines({key})" + "".join(f'.add("{n}", {n})' for n in names)
            + ".write();")


def metered(source: str, budget: int, counted: list[cpp_scan.CppLoop] | None = None,
            snapshots: int | None = None) -> str:
    """The state meter program (module docs). It counts the iterations and last exits of
    the loops ``counted`` (default: :func:`loops`; loop j is ``counted[j]``), so its run on
    the long input is also the loop profile, and it carries both checkpoints of every
    counted loop, chosen at run time (``EXECBENCH_STATE_ARM``, ``EXECBENCH_STATE_LOOP`` = j,
    ``EXECBENCH_STATE_K``): where the arm's own program emits the state, it exits.

    With ``snapshots`` (a value's maximum characters) it is also the automatic choice's
    snapshot copy: ``EXECBENCH_SNAPSHOT = "j:K:index,..."`` makes its run write what
    :func:`snapshot` writes for ``(counted[j], K, candidate_names(...)[j])`` at position
    ``index``, at the same places (and measure nothing)."""
    _check(source)
    result = cpp_scan.scan(source)
    counted = loops(source) if counted is None else counted
    header = (f"#define EXECBENCH_STATE_BUDGET {max(1, int(budget))}LL\n"
              f"#define EXECBENCH_LOOPS {max(1, len(counted))}\n" + METER_HEADER)
    names = candidate_names(source, counted) if snapshots is not None else None
    if snapshots is not None:
        header += (f"#define EXECBENCH_MAX_CHARS {int(snapshots)}u\n" + instrument_cpp.HEADER + SNAPSHOT_HEADER
                   + METER_SNAPSHOT_HEADER)
    inserts: list[tuple[int, int, str]] = [(instrument_cpp._header_offset(source), 0, header)]
    for j, loop in enumerate(counted):   # the places (and orders) of instrument_cpp's checkpoints
        anchor = instrument_cpp.find_loop(source, loop.line)
        on_enter, on_leave = f" execbench_state::enter({j});", f"execbench_state::leave({j});"
        if names is not None:
            snap = _snap("execbench_key", names[j])
            on_enter += f" if (const char* execbench_key = execbench_state::snapshot_at_start({j})) {snap}"
            on_leave += f" if (const char* execbench_key = execbench_state::snapshot_at_exit({j})) {snap}"
        inserts.append((anchor.body_open, 1, on_enter))
        inserts += _exit_inserts(source, loop, 3, on_leave)
    for start in result.statements:
        inserts.append((start, 6, "execbench_state::tick(); "))
    for start, end in result.wraps:
        inserts.append((start, -1, "{ execbench_state::tick(); "))
        inserts.append((end, 9, " }"))
    for n, decl in enumerate(result.decls):
        guard = f"execbench_state::var execbench_state_v{n}({decl.name});"
        if decl.block is None:
            guard = "static " + guard
        inserts.append((decl.at, 5, " " + guard))
    return instrument_cpp._splice(source, inserts)


def loop_index(counted: list[cpp_scan.CppLoop], loop_line: int) -> int | None:
    """j of the loop on ``loop_line`` among the meter's ``counted`` loops (None: not counted)."""
    return next((j for j, loop in enumerate(counted) if loop.line == loop_line), None)
