#!/usr/bin/env python3
"""Runs the libFuzzer target for a bounded time and reports its counts.

usage: run_fuzz.py FUZZER SEED_CORPUS WORK_DIR SECONDS CASE [extra libFuzzer args]

New inputs go to WORK_DIR/corpus (the committed seed corpus is only read);
a crash, a sanitizer report or a model mismatch leaves its input in
WORK_DIR/artifacts and fails the test.
"""
import os
import re
import subprocess
import sys


def count_line(case, count, unit, result, what):
    line = f"ND-REL-COUNT\t{case}\t{count}\t{unit}\t{result}\t{what}\n"
    sys.stdout.write(line)
    d = os.environ.get("ND_REL_COUNTS")
    if d:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"{case}.tsv"), "w", encoding="utf-8") as f:
            f.write(line)


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    fuzzer, seeds, work, seconds, case = argv[:5]
    extra = argv[5:]
    corpus = os.path.join(work, "corpus")
    artifacts = os.path.join(work, "artifacts") + "/"
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    stats = os.path.join(work, "stats.txt")
    if os.path.exists(stats):
        os.remove(stats)
    env = dict(os.environ, ND_FUZZ_STATS=stats,
               ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:allocator_may_return_null=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    cmd = [fuzzer, f"-max_total_time={seconds}", "-timeout=20", "-rss_limit_mb=2048",
           "-max_len=1024", "-len_control=0", "-print_final_stats=1", f"-artifact_prefix={artifacts}"] + extra + \
          [corpus, seeds]
    print("running:", " ".join(cmd), flush=True)
    run = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace")
    out = run.stdout
    tail = out[-6000:]
    runs = 0
    m = re.findall(r"Done (\d+) runs in (\d+) second", out)
    if m:
        runs = int(m[-1][0])
    else:
        m = re.findall(r"stat::number_of_executed_units:\s*(\d+)", out)
        runs = int(m[-1]) if m else 0
    st = {}
    if os.path.exists(stats):
        for line in open(stats, encoding="utf-8"):
            k, v = line.split()
            st[k] = int(v)
    bad = run.returncode != 0 or "ERROR: AddressSanitizer" in out or "runtime error:" in out \
        or "MODEL MISMATCH" in out or runs == 0
    print(tail)
    what = (f"{os.environ.get('ND_FUZZ_LABEL', '')}{seconds} s of random API sequences: {st.get('calls', 0):,} calls, "
            f"{st.get('hostile', 0):,} expected to fail ({st.get('bad_handles', 0):,} "
            f"forged/stale/wrong-kind handles, {st.get('bad_names', 0):,} hostile names, "
            f"{st.get('bad_ranges', 0):,} bad offsets/lengths); "
            f"{'0 crashes, 0 sanitizer reports, 0 model mismatches' if not bad else 'FAILED: see ' + artifacts}")
    count_line(case, runs, "executions", "fail" if bad else "pass", what)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
