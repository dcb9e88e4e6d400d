#!/usr/bin/env python3
"""One row of the recorder benchmarks (bench/record.sh, bench/record-burn.sh) from the run.json
files of one or more runs of the same setting:

    record_row.py LABEL STEAL_PCT RUN_DIR [RUN_DIR...]       (prints the row)
    record_row.py --header LABEL_NAME                         (prints the header)

Columns: runs, unqualified runs (a late packet or a loop stall over 80 ms), sessions with a
violation (variants whose status is not `pass`), late packets, |deviation| p99 and max in ms
over every append of every run (from each variant's input-send-receipts.json: start_s minus
scheduled_s), client loop lag max in ms, recorder cores and worker cores (means over the runs;
the worker cores include the post-processing commands the workers ran), host steal % (given).
"""
import json
import os
import sys

FMT = "{:>14} {:>4} {:>11} {:>9} {:>6} {:>10} {:>8} {:>8} {:>9} {:>9} {:>7}"


def header(label):
    print(FMT.format(label, "runs", "unqualified", "violating", "late", "|dev| p99", "max ms",
                     "lag ms", "rec cores", "wrk cores", "steal%"))


def percentile(sorted_values, f):
    # Linear interpolation (NumPy's default), as pacer's own percentiles.
    if not sorted_values:
        return None
    pos = (len(sorted_values) - 1) * f
    lo, hi = int(pos), min(int(pos) + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def row(label, steal, dirs):
    unqualified = violating = late = 0
    lag = 0.0
    rec = wrk = 0.0
    devs = []
    for d in dirs:
        r = json.load(open(os.path.join(d, "run.json")))
        load = r["load"]
        pacing, cpu, loop = load["pacing"], load["cpu"], load["client_loop"]
        unqualified += 0 if pacing["pacing_qualified"] and loop["over_80ms"] == 0 else 1
        late += pacing["late_packets"]
        lag = max(lag, loop["max_lag_s"])
        rec += cpu["recorder_cores"]
        wall = max(cpu.get("elapsed_s", 0) or 0, 1e-9)
        # Inline post-processing commands run as children of the recorder: counted with it.
        command = cpu.get("postprocess_command_cpu_s", 0) or 0
        if load.get("postprocess") == "inline":
            rec += command / wall
        wrk += cpu["worker_cores"]
        for s in r["samples"]:
            for v in s["variants"].values():
                violating += v["status"] != "pass"
                try:
                    receipts = json.load(open(os.path.join(d, v["directory"],
                                                           "input-send-receipts.json")))
                except (OSError, ValueError):
                    continue
                devs += [abs(a["start_s"] - a["scheduled_s"]) for a in receipts["appends"]]
    devs.sort()
    p99 = percentile(devs, 0.99)
    n = max(len(dirs), 1)
    print(FMT.format(label, len(dirs), unqualified, violating, late,
                     "-" if p99 is None else f"{p99 * 1e3:.1f}",
                     "-" if not devs else f"{devs[-1] * 1e3:.1f}", f"{lag * 1e3:.1f}",
                     f"{rec / n:.2f}", f"{wrk / n:.2f}", steal))


if __name__ == "__main__":
    if sys.argv[1] == "--header":
        header(sys.argv[2])
    else:
        row(sys.argv[1], sys.argv[2], sys.argv[3:])
