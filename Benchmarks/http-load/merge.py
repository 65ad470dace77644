"""Merges two wrk runs made at the same time (http-load.sh --store postgres: one wrk per server,
half the connections each) into one RESULT line of the same form as a single run's:
  requests, rps, errors, bad, booked, taken   summed (both ran for the same seconds)
  p50, p99                                    of the two latency distributions pooled: each run's
                                              quantiles (LATENCY_DUMP: every 0.05 %) weighted by
                                              its number of requests
Each run's own RESULT line is echoed on stderr.
Usage: merge.py WRK_OUTPUT_1 LATENCY_DUMP_1 WRK_OUTPUT_2 LATENCY_DUMP_2"""
import re, sys

SUMMED = ("requests", "rps", "errors", "bad", "booked", "taken")
paths = sys.argv[1:]
runs, samples = [], []
for output, dump in zip(paths[0::2], paths[1::2]):
    text = open(output).read()
    found = re.search(r"^RESULT .*$", text, re.M)
    if not found:
        sys.exit(f"merge.py: no RESULT line in {output}:\n{text[-2000:]}")
    print(f"  {found.group(0)}", file=sys.stderr)
    runs.append({k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", found.group(0))})
    lines = open(dump).read().split("\n")
    count = float(lines[0].split()[1])
    quantiles = [line.split() for line in lines[1:] if line.strip()]
    for _, value in quantiles:  # each quantile point stands for an equal share of the run's requests
        samples.append((float(value), count / len(quantiles)))

def pooled(percentile):
    samples.sort()
    total = sum(weight for _, weight in samples)
    seen = 0.0
    for value, weight in samples:
        seen += weight
        if seen >= total * percentile / 100 - 1e-9:
            return value / 1000  # µs to ms
    return 0.0

merged = {key: sum(run.get(key, 0) for run in runs) for key in SUMMED if any(key in run for run in runs)}
fields = [f"requests={int(merged['requests'])}", f"rps={merged['rps']:.1f}",
          f"p50={pooled(50):.2f}", f"p99={pooled(99):.2f}"]
fields += [f"{key}={int(merged[key])}" for key in ("errors", "bad", "booked", "taken") if key in merged]
print("RESULT " + " ".join(fields))
