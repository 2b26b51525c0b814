"""Hand-made respellings of datetime-like constructor answers (issue 35), for
``repo_grader_agreement.py --extra``.

    python benchmarks/repo_tz_respellings.py DATASET OUT.jsonl

For every task whose answer is ``<head>(year, month, day, ..., tzinfo=...)`` with ``<head>`` in
``--heads`` (default ``arrow.Arrow``), or ``ZoneInfo("...")``: the keyword form
(``year=..., month=...``), the time zone written another way (``tzinfo='UTC'`` and
``tz.tzutc()`` for a naive/UTC answer, ``ZoneInfo("X")`` and ``tz.gettz("X")`` for a zone name,
``ZoneInfo(key="X")``), and wrong values (another day, ``tzinfo='Asia/Tokyo'``,
``ZoneInfo(key="Asia/Tokyo")``). The real test decides which pass; the names used must be
imported by the test module (arrow's ``tests/test_arrow.py`` imports ``tz`` and ``ZoneInfo``).
"""

from __future__ import annotations

import argparse
import ast
import json

NAMES = ["year", "month", "day", "hour", "minute", "second", "microsecond"]


def respellings(answer: str, heads: set[str]) -> list[tuple[str, str]]:
    """(class, text) pairs for one answer."""
    try:
        node = ast.parse(answer.strip(), mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(node, ast.Call):
        return []
    head = ast.unparse(node.func)
    if head == "ZoneInfo" and len(node.args) == 1 and not node.keywords:
        arg = ast.unparse(node.args[0])
        return [("respelling", f"ZoneInfo(key={arg})"), ("respelling", f"tz.gettz({arg})"),
                ("wrong", 'ZoneInfo(key="Asia/Tokyo")')]
    if head not in heads or len(node.args) > len(NAMES):
        return []
    args = [ast.unparse(a) for a in node.args]
    kws = {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg}
    out = [("respelling", f"{head}({', '.join([f'{n}={a}' for n, a in zip(NAMES, args)] + [f'{k}={v}' for k, v in kws.items()])})")]
    base = ", ".join(args)
    zone = kws.get("tzinfo")
    if zone is None:
        out += [("respelling", f"{head}({base}, tzinfo='UTC')"), ("respelling", f"{head}({base}, tzinfo=tz.tzutc())")]
    elif zone in ("tz.tzutc()", "timezone.utc", "tz.UTC"):
        out.append(("respelling", f"{head}({base}, tzinfo='UTC')"))
    elif zone.startswith(("'", '"')):
        out += [("respelling", f"{head}({base}, tzinfo=ZoneInfo({zone}))"),
                ("respelling", f"{head}({base}, tzinfo=tz.gettz({zone}))")]
    if zone is None or zone.startswith(("'", '"', "tz.", "timezone.")):
        out.append(("wrong", f"{head}({base}, tzinfo='Asia/Tokyo')"))
    if len(args) >= 3 and args[2].isdigit():
        wrong = list(args)
        wrong[2] = str(int(wrong[2]) % 28 + 1)
        out.append(("wrong", f"{head}({', '.join(wrong)}{''.join(f', {k}={v}' for k, v in kws.items())})"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("out")
    ap.add_argument("--heads", default="arrow.Arrow", help="comma-separated constructor names")
    args = ap.parse_args()
    heads = set(args.heads.split(","))
    rows = []
    for line in open(f"{args.dataset}/tasks.jsonl", encoding="utf-8"):
        task = json.loads(line)
        if task["answer_kind"] == "text":
            rows += [{"task": task["id"], "class": c, "answer": a} for c, a in respellings(task["answer"], heads)]
    with open(args.out, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    print(f"{len(rows)} candidates for {len({r['task'] for r in rows})} tasks")


if __name__ == "__main__":
    main()
