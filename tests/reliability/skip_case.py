#!/usr/bin/env python3
"""A reliability case that cannot run here: says so loudly and records it.

usage: skip_case.py [--fail] REASON CASE...

Prints the reason in capitals-worthy form, writes a count line per CASE
(result "skipped", or "fail" with --fail) for the report, and exits 77
(ctest SKIP_RETURN_CODE) or 1 with --fail.
"""
import os
import sys


def main(argv):
    fail = "--fail" in argv
    args = [a for a in argv if a != "--fail"]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    reason, cases = args[0], args[1:]
    word = "FAILED" if fail else "SKIPPED"
    print(f"\n*** {word}: {', '.join(cases)}: {reason}\n", file=sys.stderr)
    d = os.environ.get("ND_REL_COUNTS")
    for case in cases:
        line = f"ND-REL-COUNT\t{case}\t0\truns\t{'fail' if fail else 'skipped'}\t{word}: {reason}\n"
        sys.stdout.write(line)
        if d:
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"{case}.tsv"), "w", encoding="utf-8") as f:
                f.write(line)
    return 1 if fail else 77


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
