"""`baton serve` as a child process, for the Python tests beside this file."""
import re
import subprocess
import sys
import threading


def start_server(binary, model, *flags):
    """Starts `baton serve -m MODEL --port 0 -t 1 FLAGS...` and returns (process, port) once it
    listens; the port is read from the address it prints on stderr."""
    server = subprocess.Popen(
        [binary, "serve", "-m", model, "--port", "0", "-t", "1", *flags],
        stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if match:
            # The rest of stderr goes on to ours, so a full pipe never blocks the server.
            threading.Thread(target=_copy_lines, args=(server.stderr,), daemon=True).start()
            return server, int(match.group(1))
    raise RuntimeError("baton serve did not start: exit code %s" % server.wait())


def _copy_lines(stream):
    for line in stream:
        sys.stderr.write(line)


def stop_server(server):
    """SIGTERM, then the exit code (0 when the server drained and stopped cleanly)."""
    server.terminate()
    return server.wait(timeout=60)


def check(condition, message):
    if not condition:
        raise AssertionError(message)
