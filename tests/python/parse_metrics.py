"""Fetches an OpenMetrics text exposition (our /metrics), checks its content type, parses
it with the Prometheus project's own parser and prints every sample as one JSON object a
line: {"name": ..., "labels": {...}, "value": ...}. Fails (exit 1) on text the parser
refuses.

    python parse_metrics.py URL [BEARER_TOKEN]
"""

import json
import sys
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def main() -> None:
    request = urllib.request.Request(sys.argv[1])
    if len(sys.argv) > 2:
        request.add_header("Authorization", f"Bearer {sys.argv[2]}")
    with urllib.request.urlopen(request, timeout=30) as r:
        kind = r.headers.get("Content-Type", "")
        if not kind.startswith("application/openmetrics-text"):
            raise SystemExit(f"content type {kind!r}")
        text = r.read().decode()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            print(json.dumps({"name": s.name, "labels": s.labels, "value": s.value}))


if __name__ == "__main__":
    main()
