"""What tests/test_zygote.py runs as `python -m zygote_probe <what>`, exec'd and forked, to compare."""

import atexit
import json
import os
import random
import signal
import sys
import threading
import time

what = sys.argv[1]
atexit.register(lambda: print("atexit ran", file=sys.stderr))
print(
    json.dumps(
        {
            "argv": sys.argv,
            "cwd": os.getcwd(),
            "probe": os.environ.get("PROBE"),
            "path0": sys.path[0],
            "pythonpath_first": sys.path[1] if os.environ.get("PYTHONPATH") else None,
            "main": __name__,
            "stdout_tty": sys.stdout.isatty(),
            "stdout_line_buffered": sys.stdout.line_buffering,
            "stdin": sys.stdin.read() if what == "echo" else None,
            "random": random.random(),
            "pid": os.getpid(),
        }
    ),
    flush=True,
)
if what == "exit3":
    sys.exit(3)
if what == "exit-text":
    sys.exit("told to stop")
if what == "raise":
    raise ValueError("a probe error")
if what == "interrupt":
    raise KeyboardInterrupt
if what == "thread":  # a non-daemon thread still running when the main one ends is waited for
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread done", flush=True))).start()
if what == "sigterm-handler":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(5))
if what in ("wait", "sigterm-handler"):
    print("waiting", flush=True)
    time.sleep(30)
if what == "exec":  # becomes another program, as `abeq app` becomes its Streamlit server
    os.execve(sys.executable, [sys.executable, "-m", "streamlit", "version"], {**os.environ, "PROBE": "2"})
if what == "unflushed":
    sys.stdout.write("no newline, not flushed")
if what == "resource-warning":  # shown only where PYTHONWARNINGS (or -W) asks for it
    import warnings

    warnings.warn("probe resource warning", ResourceWarning, stacklevel=1)
