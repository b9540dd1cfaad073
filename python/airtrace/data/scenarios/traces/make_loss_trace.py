"""Writes losses-2000.txt: a loss trace of 2000 packets (one 0/1 per line) from a
seeded two-state chain, mostly clean with runs of losses.
Run: python3 make_loss_trace.py (from scenarios/traces/)."""

import random

r = random.Random(4)
lines = ["# One line per packet sent on the forward direction: 1 = lost. A burst-y recording:", "# mostly clean, with runs of losses (made by traces/make_loss_trace.py)."]
state_bad = False
for _ in range(2000):
    if state_bad:
        lines.append("1" if r.random() < 0.7 else "0")
        state_bad = r.random() > 0.3
    else:
        lines.append("1" if r.random() < 0.002 else "0")
        state_bad = r.random() < 0.004
with open("losses-2000.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
