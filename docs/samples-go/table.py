#!/usr/bin/env python3
"""Summarises a run.sh output directory as the Markdown table of
docs/samples-go.md: per package, the test outcome in each mode and the
halts the guard raised (reason, detector, node, workflow type)."""
import collections, json, sys

out = sys.argv[1]
modes = ["off", "zero", "scoped"]
result = collections.defaultdict(dict)   # pkg -> mode -> pass/fail/skip
failed = collections.defaultdict(dict)   # pkg -> mode -> [test]
halts = collections.defaultdict(lambda: collections.defaultdict(list))
for mode in modes:
    for line in open(f"{out}/test-{mode}.json"):
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        pkg = ev.get("Package", "").replace("github.com/temporalio/samples-go/", "")
        if ev.get("Action") in ("pass", "fail", "skip") and not ev.get("Test"):
            result[pkg][mode] = ev["Action"]
        if ev.get("Action") == "fail" and ev.get("Test") and "/" not in ev["Test"]:
            failed[pkg].setdefault(mode, []).append(ev["Test"])
    for line in open(f"{out}/halts-{mode}.tsv"):
        pkg, _, payload = line.rstrip("\n").split("\t", 2)
        ev = json.loads(payload)["event"]
        pkg = pkg.replace("github.com/temporalio/samples-go/", "")
        halts[pkg][mode].append(ev)

def describe(evs):
    seen = collections.Counter()
    for e in evs:
        seen[f'{e["workflowType"]}: {e["haltReason"]} ({e["detector"]}) at {e.get("node","")}'] += 1
    return "; ".join(f"{k}" + (f" ×{n}" if n > 1 else "") for k, n in sorted(seen.items()))

pkgs = sorted(p for p in result if result[p].get("off") != "skip")
print("| package | no guard | zero Options | halts with zero Options | scoped (`Workflows: [AgentLoop]`) |")
print("|---|---|---|---|---|")
for p in pkgs:
    r = result[p]
    cell = lambda m: r.get(m, "?") + (f' ({", ".join(failed[p][m])})' if failed[p].get(m) else "")
    print(f"| {p} | {cell('off')} | {cell('zero')} | {describe(halts[p]['zero']) or '—'} | {cell('scoped')}{' — halts: ' + describe(halts[p]['scoped']) if halts[p]['scoped'] else ''} |")
tot = {m: collections.Counter(result[p].get(m) for p in pkgs) for m in modes}
print()
for m in modes:
    print(f"{m}: {len(pkgs)} packages, {tot[m]['pass']} pass, {tot[m]['fail']} fail; packages with halts: {sum(1 for p in pkgs if halts[p][m])}")
