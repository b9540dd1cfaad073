"""Writes fading-3mbit.trace: a Mahimahi delivery-opportunity trace of a 3 Mbit/s link
(one 1500-byte opportunity every 4 ms) that fades to nothing for 400 ms every 5 s.
The trace is 20 s long and loops. Run: python3 make_fading_trace.py > fading-3mbit.trace"""

import sys

lines = []
for ms in range(0, 20_000, 4):
    if ms % 5000 >= 4600:  # the fade: the last 400 ms of every 5 s
        continue
    lines.append(str(ms))
sys.stdout.write("\n".join(lines) + "\n")
