#!/usr/bin/env python3
"""Writes the peers' ported scenarios as labelled traces (see README.md).

    python3 port.py /path/to/swe-agent-trajectories

The OpenHands and Cline scenarios are written out by hand below, from the
tests named in each trace's note; the SWE-agent traces are read from the
three .traj files of SWE-agent's tests/test_data (paths in README.md).
"""
import json
import os
import sys

OUT = os.path.dirname(os.path.abspath(__file__))
written = []


def write(fname, name, source, calls, loop, onset=None, reason=None, note="", policy=None, peer=None):
    d = {"name": name, "source": source}
    if note:
        d["note"] = note
    if peer:
        d["peer"] = peer
    d["loop"] = loop
    if loop:
        d["onset"] = onset
        d["wantReason"] = reason
    if policy:
        d["policy"] = policy
    d["calls"] = calls
    lines = [json.dumps(c, ensure_ascii=False) for c in calls]
    head = json.dumps({k: v for k, v in d.items() if k != "calls"}, ensure_ascii=False, indent=2)
    text = head[:-2] + ',\n  "calls": [\n    ' + ",\n    ".join(lines) + "\n  ]\n}\n"
    json.loads(text)
    with open(os.path.join(OUT, fname), "w") as f:
        f.write(text)
    written.append(fname)


# ---------------------------------------------------------------- OpenHands
# tests/unit/controller/test_is_stuck.py at All-Hands-AI/OpenHands
# 156d0686c46aafb0fa9d291da6421fb6f64dddc0. Mapping: an action is the
# agent's step (node "agent", output the action with its id when the test
# sets one), an observation is the tool's step (node by action type), an
# ErrorObservation a failed tool call, a NullObservation nothing (the
# agent's message needs no tool), a user message a signal (no guarded call;
# headless mode).
OH = "openhands"
CODE = "\nedit_file_by_replace(\n    'book_store.py',\n    to_replace=\"\"\"def total(basket):\n    if not basket:\n        return 0\n"
J1, J2 = "\n[Jupyter current working directory:", "\n[Jupyter Python interpreter:"


def act_run(cmd, id=None):
    a = {"action": "run", "args": {"command": cmd}}
    if id is not None:
        a["id"] = id
    return {"node": "agent", "output": a}


def obs_run(cmd, content, id=None, cause=None):
    o = {"observation": "run", "content": content, "extras": {"command": cmd, "exit_code": 0}}
    if id is not None:
        o["extras"]["command_id"] = id
    if cause is not None:
        o["cause"] = cause
    return {"node": "run", "output": o}


def act_msg(content):
    return {"node": "agent", "output": {"action": "message", "args": {"content": content}}}


def act_read(path):
    return {"node": "agent", "output": {"action": "read", "args": {"path": path}}}


def obs_read(path, content):
    return {"node": "read", "output": {"observation": "read", "content": content, "extras": {"path": path}}}


def act_ipy(code):
    return {"node": "agent", "output": {"action": "run_ipython", "args": {"code": code}}}


def obs_ipy(code, content):
    return {"node": "run_ipython", "output": {"observation": "run_ipython", "content": content, "extras": {"code": code}}}


def err(msg):
    return {"node": "run", "error": "ErrorObservation: " + msg}


def syntax_events(error_message, random_line, incidents=4):
    calls = []
    for i in range(incidents):
        calls.append(act_ipy(CODE))
        extra_number = (i + 1) * 10 if random_line else "42"
        extra_line = "\n" * (i + 1) if random_line else ""
        calls.append(obs_ipy(CODE, f"  Cell In[1], line {extra_number}\n" + 'to_replace="""def largest(min_factor, max_factor):\n            ^\n' + f"{error_message}{extra_line}" + J1 + J2))
    return calls


def unterminated_events(random_line, incidents=4):
    calls = []
    for i in range(incidents):
        calls.append(act_ipy(CODE))
        line = (i + 1) * 10 if random_line else "1"
        calls.append(obs_ipy(CODE, f'print("  Cell In[1], line {line}\nhello\n       ^\nSyntaxError: unterminated string literal (detected at line {line})' + J1 + J2))
    return calls


def openhands():
    t = "test_is_stuck.py::"
    write("prog-openhands-history-too-short.json", "history too short", OH,
          [act_msg("Hello"), act_run("ls"), obs_run("ls", "file1.txt\nfile2.txt")], False,
          note=t + "test_history_too_short")
    calls = []
    for i in range(8):
        calls += [act_run("ls", id=i), obs_run("ls", "", id=i, cause=i)]
    write("loop-openhands-ls-with-ids.json", "ls repeated with fresh event ids", OH, calls, True, 2, "stalled",
          note=t + "test_interactive_mode_resets_after_user_message (headless: stuck after 4 pairs; the user message is a signal, not a call). Action and observation ids change every call")
    calls = [act_msg("Hello")]
    for i in range(1, 5):
        calls += [act_run("ls", id=i), obs_run("ls", "", cause=i)]
    write("loop-openhands-repeating-action-observation.json", "repeating action/observation", OH, calls, True, 3, "stalled",
          note=t + "test_is_stuck_repeating_action_observation (4 pairs; the user message between pairs 2 and 3 is a signal)")
    calls = [act_msg("Hello")]
    for e in ["Command not found", "Command still not found or another error", "Different error", "Command not found"]:
        calls += [act_run("invalid_command"), err(e)]
    write("loop-openhands-repeating-action-error.json", "repeating action, errors (not necessarily the same)", OH, calls, True, 3, "repeated_error",
          note=t + "test_is_stuck_repeating_action_error")
    msg = "SyntaxError: invalid syntax. Perhaps you forgot a comma?"
    write("loop-openhands-invalid-syntax.json", "same invalid syntax error", OH, syntax_events(msg, False), True, 2, "stalled",
          note=t + "test_is_stuck_invalid_syntax_error")
    write("prog-openhands-invalid-syntax-random-lines.json", "syntax errors at different lines", OH, syntax_events(msg, True), False,
          note=t + "test_is_not_stuck_invalid_syntax_error_random_lines: the same cell, answered by errors at lines 10, 20, 30, 40")
    write("prog-openhands-invalid-syntax-three.json", "three syntax errors at different lines", OH, syntax_events(msg, True, 3), False,
          note=t + "test_is_not_stuck_invalid_syntax_error_only_three_incidents")
    write("loop-openhands-incomplete-input.json", "same incomplete input error", OH, syntax_events("SyntaxError: incomplete input", False), True, 2, "stalled",
          note=t + "test_is_stuck_incomplete_input_error")
    write("prog-openhands-incomplete-input-random-lines.json", "incomplete input at different lines", OH, syntax_events("SyntaxError: incomplete input", True), False,
          note=t + "test_is_not_stuck_incomplete_input_error")
    write("prog-openhands-unterminated-random-lines.json", "unterminated string at different lines", OH, unterminated_events(True), False,
          note=t + "test_is_not_stuck_ipython_unterminated_string_error_random_lines")
    write("prog-openhands-unterminated-two.json", "unterminated string twice", OH, unterminated_events(False, 2), False,
          note=t + "test_is_not_stuck_ipython_unterminated_string_error_only_two_incidents")
    write("loop-openhands-unterminated.json", "same unterminated string error", OH, unterminated_events(False), True, 2, "stalled",
          note=t + "test_is_stuck_ipython_unterminated_string_error")
    code = 'print("hello'
    tails = [("1", "This is some additional output"), ("1", "Too much output here on and on"), ("3", "Enough"), ("2", "Last line of output")]
    calls = []
    for line, tail in tails:
        calls += [act_ipy(code), obs_ipy(code, f'print("hello\n       ^\nSyntaxError: unterminated string literal (detected at line {line})\n{tail}')]
    write("prog-openhands-syntax-error-not-at-end.json", "syntax error not at the end of the output", OH, calls, False,
          note=t + "test_is_not_stuck_ipython_syntax_error_not_at_end")
    calls = []
    for _ in range(3):
        calls += [act_run("ls"), obs_run("ls", "file1.txt\nfile2.txt"), act_read("file1.txt"), obs_read("file1.txt", "File content")]
    write("loop-openhands-action-observation-pattern.json", "A/B pattern of action/observation pairs", OH, calls, True, 4, "oscillating",
          note=t + "test_is_stuck_repeating_action_observation_pattern (3 periods of (ls, read file1); the user messages are signals)")
    calls = [act_msg("Hello"), act_run("ls"), obs_run("ls", "file1.txt\nfile2.txt"), act_read("file1.txt"), obs_read("file1.txt", "File content"),
             act_run("pwd"), obs_run("pwd", "/home/user"), act_read("file2.txt"), obs_read("file2.txt", "Another file content"),
             act_run("pwd"), obs_run("pwd", "/home/user"), act_read("file2.txt"), obs_read("file2.txt", "Another file content")]
    write("loop-openhands-not-stuck-two-periods.json", "distinct steps, last two pairs repeated once", OH, calls, True, 9, "oscillating",
          peer="openhands: not stuck, its A/B pattern rule needs 3 periods (6 action/observation pairs); ours needs OscillationPeriods (2): the pair (pwd, read file2) with the same observations, twice in a row, halts",
          note=t + "test_is_stuck_not_stuck")
    well = "I'm doing well, thanks for asking."
    calls = [act_msg("Hi there!"), {"node": "agent", "output": {"action": "run", "args": {"command": "echo 42", "thought": "I'm not stuck, he's stuck"}}},
             act_msg(well), act_msg(well), act_msg(well)]
    write("loop-openhands-monologue.json", "agent monologue", OH, calls, True, 3, "stalled",
          note=t + "test_is_stuck_monologue (first part: three identical agent messages in a row)")
    calls = [act_msg(well), obs_run("storybook", "OK, I was stuck, but no more."), act_msg(well), act_msg(well)]
    write("prog-openhands-monologue-interrupted.json", "monologue interrupted by an observation", OH, calls, False,
          note=t + "test_is_stuck_monologue (second part: an observation between the repeated messages; OpenHands counts the agent messages after the last observation)")
    cond = {"node": "condenser", "output": {"observation": "agent_condensation", "content": "Trimming prompt to meet context window limitations"}}
    write("loop-openhands-context-window.json", "ten condensations in a row", OH, [act_msg("Hello")] + [cond] * 10, True, 2, "stalled",
          note=t + "test_is_stuck_context_window_error_loop")
    calls = [act_msg("Hello")]
    for i in range(10):
        calls.append(cond)
        if i < 9:
            calls += [act_run(f"ls {i}"), obs_run(f"ls {i}", "file1.txt\nfile2.txt")]
            if i % 2 == 0:
                calls += [act_read(f"file{i}.txt"), obs_read(f"file{i}.txt", f"File content {i}")]
    write("prog-openhands-context-window-with-work.json", "condensations between real work", OH, calls, False, policy={"maxCycleIterations": 20, "maxCallsPerNode": 20},
          note=t + "test_is_not_stuck_context_window_error_with_other_events: a constant condenser node inside a progressing loop")
    write("loop-openhands-context-window-nine.json", "nine condensations in a row", OH, [act_msg("Hello")] + [cond] * 9, True, 2, "stalled",
          peer="openhands: not stuck below its own threshold of 10 condensation events; ours is RepeatThreshold (3) identical steps of a node alone. Our choice: a condenser that trims the same prompt nine times in a row is stuck",
          note=t + "test_is_not_stuck_context_window_error_less_than_ten")
    write("loop-openhands-context-window-user-messages.json", "condensations with user messages between", OH, [act_msg("Hello")] + [cond] * 10, True, 2, "stalled",
          note=t + "test_is_stuck_context_window_error_with_user_messages (user messages are signals: no guarded call between the condensations)")


# -------------------------------------------------------------------- Cline
# sdk/packages/core/src/runtime/safety/loop-detection.test.ts at cline/cline
# 1368c71a76eab98c8e5a41fcdfe2d2e2285da1c7 (the tracker is built with
# softThreshold 2, hardThreshold 3; its default is 3 and 5). A batch is one
# step of node "poll" (parallel outcomes are fan-out calls). "hard" means
# stuck. Traces with more than 10 polls raise maxCallsPerNode so that only
# the rules under test can halt them.
CL = "cline"


def poll(out, parallel=False):
    c = {"node": "poll", "output": out}
    if parallel:
        c["parallel"] = True
    return c


def cline():
    t = "loop-detection.test.ts::"
    write("prog-cline-changed-output-resets.json", "changed successful output resets the counter", CL,
          [poll("10%"), poll("20%"), {"node": "poll"}], False, note=t + "resets the ordinary counter after changed successful output")
    write("loop-cline-unchanged-output.json", "unchanged successful output escalates", CL,
          [poll("same"), poll("same"), poll("same")], True, 1, "stalled", note=t + "escalates unchanged successful output (hard at the third call; ours halts before the fourth)")
    write("loop-cline-changing-failures.json", "changing failures are no progress", CL,
          [{"node": "poll", "error": "Error: error 1"}, {"node": "poll", "error": "Error: error 2"}, {"node": "poll", "error": "Error: error 3"}], True, 1, "repeated_error",
          note=t + "does not treat changing failures as progress (the third outcome added: it fails like the first two)")
    write("loop-cline-changing-output-bounded.json", "continually changing output is bounded", CL,
          [poll({"status": "pending", "timestamp": i}) for i in range(1, 13)], True, 1, "budget_exceeded",
          peer="cline: hard only at its absolute limit of 12 calls; the label is a budget's: our MaxCallsPerNode (10) halts it, no stall rule does (a timestamp that counts is not read as volatile on a node alone)",
          note=t + "bounds continually changing output without interpreting it")
    write("loop-cline-dates-bounded.json", "changing dates and nonces are bounded", CL,
          [poll({"timestamp": f"{i}/{i + 1}/2026", "nonce": i}) for i in range(1, 13)], True, 1, "budget_exceeded",
          peer="cline: hard only at its absolute limit of 12 calls; the label is a budget's (MaxCallsPerNode)",
          note=t + "does not interpret dates as ratio progress")
    for name, fn in [("percentages", lambda s: f"{s}%"), ("progress-fields", lambda s: {"progress": s / 100}), ("ratios", lambda s: f"{s}/100")]:
        write(f"prog-cline-explicit-{name}.json", f"explicit {name} beyond the fallback limit", CL,
              [poll(fn(i)) for i in range(1, 16)], False, policy={"maxCallsPerNode": 20, "maxCycleIterations": 20},
              note=t + "allows explicit %s beyond the fallback limit" % name)
    steps = [0, 25, 50, 75, 100]
    write("prog-cline-progress-restarts.json", "bounded explicit progress restarts", CL,
          [poll({"progress": steps[(i - 1) % 5]}) for i in range(1, 21)], False, policy={"maxCallsPerNode": 30, "maxCycleIterations": 30, "maxEdgeWithoutProgress": 30},
          note=t + "allows bounded explicit progress restarts (0, 25, 50, 75, 100, four times)")
    write("loop-cline-oscillating-progress.json", "oscillating explicit progress", CL,
          [poll({"progress": i % 2}) for i in range(1, 13)], True, 2, "oscillating", policy={"maxCallsPerNode": 200},
          peer="cline: hard only at its absolute limit of 113 calls; ours halts the A/B oscillation after two periods",
          note=t + "bounds oscillating explicit progress (first 12 of 112 polls)")
    calls = []
    for i in range(1, 12):
        calls += [poll(f"poll {i}"), {"node": "other", "output": "other"}]
    calls.append(poll("poll 12"))
    write("loop-cline-interleaved-bounded.json", "absolute limit across interleaved signatures", CL, calls, True, 2, "budget_exceeded",
          peer="cline: hard at its absolute limit of 12 polls; the label is a budget's (MaxCallsPerNode, MaxCycleIterations)",
          note=t + "keeps the absolute limit across interleaved signatures")
    write("loop-cline-parallel-batch.json", "parallel outcomes as one order-independent batch", CL,
          [poll("10%"), poll("20%", True), poll("20%"), poll("10%", True), poll("10%"), poll("20%", True)], True, 2, "stalled",
          note=t + "treats parallel outcomes as one order-independent batch (third batch added: the same set again)")
    write("loop-cline-sequential-batch.json", "sequential identical outcomes", CL,
          [poll("same"), poll("same"), poll("same")], True, 1, "stalled",
          peer="cline: sequential calls inside one agent iteration count once (soft warning only); ours sees three identical steps of a node alone: stuck",
          note=t + "treats sequential outcomes in one iteration as one batch")
    write("prog-cline-parallel-progress.json", "progress from every parallel outcome", CL,
          [poll("10%"), poll("10%", True), poll("20%"), poll("10%", True), {"node": "poll"}], False,
          note=t + "retains progress from every parallel outcome")
    write("loop-cline-stable-fingerprints.json", "object key order is not a difference", CL,
          [poll({"first": 1, "second": 2}), poll({"second": 2, "first": 1}), poll({"first": 1, "second": 2})], True, 1, "stalled",
          note=t + "uses stable object fingerprints (third call added)")
    for name, a, b in [("number-string", 1, "1"), ("null-string", None, "null"), ("boolean-string", True, "true")]:
        write(f"prog-cline-types-{name}.json", f"output types preserved: {name}", CL,
              [poll(a), poll(b), {"node": "poll"}], False, note=t + "preserves output types for " + name)
    write("prog-cline-dates-preserved.json", "serializable dates preserved", CL,
          [poll({"updatedAt": "2026-01-01T00:00:00.000Z"}), poll({"updatedAt": "2026-01-02T00:00:00.000Z"}), {"node": "poll"}], False,
          note=t + "preserves serializable non-plain output values")


# ---------------------------------------------------------------- SWE-agent
# Three trajectories of SWE-agent/SWE-agent's tests/test_data at
# 3ea751c087f32b16e039a2233dd6eefecef325d5. Each step is the model's turn
# (node "model": thought and action) and the environment's (node "env":
# observation and execution time). Loop variants keep the run up to a step
# and then repeat that step with the noise real runs carry.
SW = "swe-agent"
PARAPHRASE = [
    "Let me run it again to see whether the problem persists.",
    "I'll run it once more to check the result.",
    "Running it again to confirm the behaviour.",
    "Let me try running this again and look at the output.",
    "I will execute it again to verify.",
    "Once more, let me check the output of this command.",
]


def swe_calls(traj):
    calls = []
    for s in traj:
        calls.append({"node": "model", "output": {"thought": s["thought"], "action": s["action"]}})
        obs = {"observation": s["observation"]}
        if s.get("execution_time") is not None:
            obs["execution_time"] = s["execution_time"]
        calls.append({"node": "env", "output": obs})
    return calls


def sweagent(dirpath):
    runs = [("6e44b9", "a.traj", "tests/test_data/trajectories/gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/6e44b9__sweagenttestrepo-1c2844.traj"),
            ("test-repo-i1", "b.traj", "tests/test_data/trajectories/gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/swe-agent__test-repo-i1.traj"),
            ("pydicom-1458", "c.traj", "tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj")]
    for key, fname, path in runs:
        traj = json.load(open(os.path.join(dirpath, fname)))["trajectory"]
        calls = swe_calls(traj)
        write(f"prog-swe-agent-{key}.json", f"SWE-agent run {key}", SW, calls, False, policy={"maxCallsPerNode": 40, "maxCycleIterations": 40},
              note=path)
        # Variant 1: the model re-runs its second-to-last action with
        # paraphrased thoughts; the output repeats, with a fresh timing line.
        k = len(traj) - 2
        base = swe_calls(traj[:k])
        s = traj[k - 1] if k > 0 else traj[0]
        loop = []
        for i in range(6):
            loop.append({"node": "model", "output": {"thought": PARAPHRASE[i], "action": s["action"]}})
            loop.append({"node": "env", "output": {"observation": s["observation"].rstrip() + f"\n(command took {0.21 + 0.07 * i:.2f}s at 2024-05-0{i + 1}T10:1{i}:0{i}Z)", "execution_time": round(0.3 + 0.11 * i, 2)}})
        write(f"loop-swe-agent-{key}-rerun-noisy.json", f"SWE-agent {key}: re-runs the same action, paraphrased thoughts, timing noise", SW,
              base + loop, True, len(base) + 2, "stalled", policy={"maxCallsPerNode": 40, "maxCycleIterations": 40},
              note=path + f": steps 1-{k}, then step {k}'s action repeated six times")
        # Variant 2: the tool call carries a fresh call id and JSON
        # arguments in another key order; the observation lists the same
        # files in another order with a request id.
        loop = []
        files = ["tests/missing_colon.py", "tests/test_division.py", "src/calc.py"]
        for i in range(6):
            args = {"path": "tests", "pattern": "*.py"} if i % 2 == 0 else {"pattern": "*.py", "path": "tests"}
            loop.append({"node": "model", "output": {"id": f"call_{i:02d}{'abcdef'[i]}9f3e2a7b1c", "tool": "find_file", "arguments": json.dumps(args)}})
            order = files[i % 3:] + files[:i % 3]
            loop.append({"node": "env", "output": {"matches": order, "request_id": f"req_{(i + 7) * 7919 * 104729:012x}", "elapsed": f"{12 + i}ms"}})
        write(f"loop-swe-agent-{key}-tool-ids.json", f"SWE-agent {key}: same tool call with fresh ids, reordered arguments and results", SW,
              base + loop, True, len(base) + 2, "stalled", policy={"maxCallsPerNode": 40, "maxCycleIterations": 40},
              note=path + f": steps 1-{k}, then a find_file tool call repeated six times")
        # Variant 3: the model alternates between two actions whose
        # observations repeat (open the file, re-run the script).
        a, b = traj[min(1, len(traj) - 1)], traj[max(len(traj) - 2, 0)]
        loop = []
        for i in range(4):
            for s2 in (a, b):
                loop.append({"node": "model", "output": {"thought": PARAPHRASE[(i * 2 + (s2 is b)) % 6], "action": s2["action"]}})
                loop.append({"node": "env", "output": {"observation": s2["observation"], "execution_time": round(0.2 + 0.05 * i, 2)}})
        write(f"loop-swe-agent-{key}-ab-alternation.json", f"SWE-agent {key}: alternates between two actions with repeating observations", SW,
              base + loop, True, len(base) + 4, "oscillating", policy={"maxCallsPerNode": 40, "maxCycleIterations": 40},
              note=path + f": steps 1-{k}, then steps 2 and {len(traj) - 1} alternated four times")


# ----------------------------------------------------- waiting and acks
# Temporal's documented polling pattern (temporalio/samples-go
# polling/periodic_sequence: the activity fails with the same error until
# the service is up; a durable timer between polls) and the other
# scenarios: a constant acknowledgement node in a progressing loop, an
# agent that sleeps between turns and still loops.
def waiting():
    calls = [{"node": "start_job", "output": {"jobId": "job-7"}}]
    for i in range(4):
        calls.append({"node": "poll_status", "output": {"status": "pending"}, "timer": i > 0})
    calls.append({"node": "poll_status", "output": {"status": "done", "rows": 80}, "timer": True})
    calls.append({"node": "fetch_result", "output": {"rows": 80}})
    write("prog-temporal-poll-pending-then-done.json", "poller waits on pending with a timer between polls", "temporal", calls, False,
          note="one node polled alone, identical results, a durable timer between polls: waiting, not looping")
    calls = []
    for i in range(5):
        calls.append({"node": "do_something", "error": "Error: service is down", "timer": i > 0})
    calls.append({"node": "do_something", "output": "done", "timer": True})
    write("prog-temporal-periodic-sequence.json", "periodic polling of a service that is down", "temporal", calls, False,
          note="temporalio/samples-go polling/periodic_sequence: the same error on every poll, workflow.Sleep between polls")
    calls = []
    for i in range(6):
        calls.append({"node": "llm", "output": {"tool": "search", "query": "rate limits for the orders API"}, "timer": i > 0})
        calls.append({"node": "search", "output": {"hits": ["docs/orders.md#limits"]}})
    write("loop-temporal-agent-sleeps-between-turns.json", "agent sleeps between turns (rate limit) and repeats itself", "temporal", calls, True, 2, "stalled",
          note="a loop of several nodes whose whole iteration repeats is stuck, timers or not")
    calls = []
    for i in range(8):
        calls.append({"node": "coder", "output": {"patch": f"--- a/app.py\n+++ b/app.py\n@@ -{10 + i * 7},3 @@\n+    handle_case_{chr(97 + i)}()"}})
        calls.append({"node": "verifier", "output": {"passed": False, "failing": [f"test_case_{chr(98 + i + k)}" for k in range(8 - i)]}})
        calls.append({"node": "checkpoint", "output": {"saved": True}})
    write("prog-loopguard-constant-ack.json", "constant ack node in a progressing coder/verifier loop", "loopguard", calls, False,
          note="zero Options: the checkpoint returns {\"saved\": true} every iteration while the coder and verifier move on")


if __name__ == "__main__":
    for f in os.listdir(OUT):
        if f.endswith(".json"):
            os.remove(os.path.join(OUT, f))
    openhands()
    cline()
    sweagent(sys.argv[1])
    waiting()
    print(len(written), "traces")
