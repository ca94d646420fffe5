"""The test apps' event log: one JSON object a line, appended to $APP_LOG, with a monotonic time."""
import json
import os
import time


def log(event, **kw):
    kw.update(event=event, t=round(time.monotonic(), 3))
    with open(os.environ["APP_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps(kw) + "\n")
