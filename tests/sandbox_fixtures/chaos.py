"""A fake runner for tests/sandbox/test_sandbox.py: echoes requests and misbehaves on command.

Frames come in on fd 3 and go out on fd 4 through channel.py, so that nothing else of the
grader package runs. ``argv[1]`` is a token unique to the test: every
process started here carries it on its command line, so the test can look for survivors.
Every bomb is bounded: a few hundred processes, a few GiB, children that exit by themselves.
"""

import errno
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # python -I leaves it out
import channel  # noqa: E402

HOLD_S = 60  # how long forked children and daemons live if nobody kills them


def _read(path):
    with open(path) as fh:
        return fh.read()


def info(_msg):
    status = dict(
        line.split(":\t", 1) for line in _read("/proc/self/status").splitlines() if ":\t" in line
    )
    limits = {}
    for line in _read("/proc/self/limits").splitlines()[1:]:
        name, soft = line[:26].strip(), line[26:47].strip()
        limits[name] = soft
    return {
        "uid": os.getuid(),
        "euid": os.geteuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "pid": os.getpid(),
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "limits": limits,
        "oom_score_adj": _read("/proc/self/oom_score_adj").strip(),
        "no_new_privs": status.get("NoNewPrivs", "").strip(),
        "cap_eff": status.get("CapEff", "").strip(),
        "hostname": socket.gethostname(),
        "prefix": sys.prefix,
        "sid_is_pgid": os.getsid(0) == os.getpgid(0),
        "stdin": os.readlink("/proc/self/fd/0"),
        "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
        "submission": _read(os.environ["GRADER_SUBMISSION"])
        if os.path.isfile(os.environ["GRADER_SUBMISSION"])
        else None,
    }


def numpy_(_msg):
    import numpy

    return {
        "file": numpy.__file__,
        "sum": int(numpy.arange(10).sum()),
        "prefix": sys.prefix,
        "matmul": float((numpy.ones((50, 50)) @ numpy.ones((50, 50)))[0, 0]),
    }


def spin(_msg):
    while True:
        pass


def sleep(msg):
    time.sleep(msg.get("seconds", 3600))
    return {"slept": True}


def segfault(_msg):
    import ctypes

    ctypes.string_at(0)


def exit_(msg):
    os._exit(msg.get("code", 3))


def fork(msg):
    forked, error = 0, None
    for _ in range(msg["n"]):
        try:
            pid = os.fork()
        except OSError as exc:
            error = exc.errno
            break
        if pid == 0:
            time.sleep(HOLD_S)
            os._exit(0)
        forked += 1
    return {"forked": forked, "errno": error}


def daemon(_msg):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(HOLD_S)
        os._exit(0)
    os.waitpid(pid, 0)
    return {"daemon": True}


def alloc(msg):
    block = bytearray(msg["bytes"])  # MemoryError under RLIMIT_AS: not caught, the worker dies
    return {"allocated": len(block)}


def print_(msg):
    chunk = ("x" * 1023 + "\n").encode()
    out = sys.stdout.buffer
    out.write(b"\x1b[31mred\x1b[0m \x1b]0;title\x07 bell\x07 nul\x00 start\n")
    for _ in range(msg["bytes"] // len(chunk)):
        out.write(chunk)
    out.write(b"the end \x1b[2J\n")
    out.flush()
    return {"printed": msg["bytes"]}


def write_file(msg):
    path = msg.get("path", "big.bin")
    written = 0
    block = b"\0" * (1 << 20)
    try:
        with open(path, "wb", buffering=0) as fh:
            while written < msg["bytes"]:
                written += fh.write(block)
    except OSError as exc:
        return {"written": os.path.getsize(path), "errno": exc.errno}
    return {"written": written, "errno": None}


def raw(msg):
    os.write(4, bytes.fromhex(msg["hex"]))
    if msg.get("then") == "spin":
        spin(msg)
    if msg.get("then") == "sleep":
        time.sleep(3600)
    return None  # no frame: the raw bytes were the answer


def late(_msg):
    def later():
        time.sleep(0.2)
        channel.reply({"late": True})
        open("late-sent", "w").close()  # the frame is in the pipe: the test may go on

    threading.Thread(target=later).start()
    return {"on_time": True}


def close_reply(_msg):
    os.close(4)
    time.sleep(HOLD_S)


def connect(msg):
    try:
        with socket.create_connection((msg["host"], msg["port"]), timeout=2) as conn:
            conn.sendall(b"hello")
        return {"connected": True, "error": None}
    except OSError as exc:
        return {"connected": False, "error": f"{type(exc).__name__}: {exc}"}


def read(msg):
    try:
        with open(msg["path"]) as fh:
            return {"content": fh.read(), "error": None}
    except OSError as exc:
        return {"content": None, "error": type(exc).__name__}


def write(msg):
    try:
        with open(msg["path"], "w") as fh:
            fh.write("written by the worker")
        return {"error": None, "errno": None}
    except OSError as exc:
        return {"error": type(exc).__name__, "errno": errno.errorcode.get(exc.errno)}


def exit_after_reply(_msg):
    channel.reply({"bye": True})
    os._exit(0)


def stderr(msg):
    sys.stderr.write(msg["text"])
    sys.stderr.flush()
    return {"ok": True}


OPS = {
    name.rstrip("_"): fn
    for name, fn in list(globals().items())
    if callable(fn) and not name.startswith("_") and fn.__module__ == __name__
}


def main():
    for message in channel.requests():
        op = message.get("op") if isinstance(message, dict) else None
        if op is None:
            channel.reply(message)
            continue
        reply = OPS[op](message)
        if op not in ("raw", "exit_after_reply"):
            channel.reply(reply)


if __name__ == "__main__":
    main()
