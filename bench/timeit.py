#!/usr/bin/env python3
"""Run one command; print its wall time and peak RSS.

    python3 -S -I timeit.py [--timeout S] [--stdout FILE] [--stderr FILE] [--] CMD [ARG...]

Prints one line on stdout:  <wall seconds> <peak RSS KB> <exit code>
The peak RSS is ru_maxrss from wait4(2) of the child, which on Linux covers
the child and the descendants it waited for (e.g. the commands of `sh -c`).
The exit code is the child's, 128+N if killed by signal N, 124 on timeout
(the whole process group is killed), 127 if the command cannot be started.
The command's stdout/stderr go to /dev/null unless --stdout/--stderr are given.
"""
import os
import signal
import sys
import time


def main(argv):
    timeout = None
    out_path = os.devnull
    err_path = os.devnull
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if a == "--timeout":
            timeout = float(argv[i + 1]); i += 2
        elif a == "--stdout":
            out_path = argv[i + 1]; i += 2
        elif a == "--stderr":
            err_path = argv[i + 1]; i += 2
        else:
            break
    cmd = argv[i:]
    if not cmd:
        print(__doc__, file=sys.stderr)
        return 64

    # posix_spawn (vfork-like) from a small interpreter (run with -S -I):
    # the child's ru_maxrss starts at this process's own peak RSS, so keep
    # it low (no subprocess/threading imports).
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, out_path, flags, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, err_path, flags, 0o644),
    ]
    timed_out = []
    t0 = time.perf_counter()
    try:
        pid = os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=actions, setsid=True)
    except OSError as e:
        with open(err_path, "ab") as err:
            err.write(("timeit: cannot run %s: %s\n" % (cmd[0], e)).encode())
        print("%.6f %d %d" % (time.perf_counter() - t0, 0, 127))
        return 0
    if timeout:
        def kill(signum, frame):
            timed_out.append(True)
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        signal.signal(signal.SIGALRM, kill)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    _, status, ru = os.wait4(pid, 0)  # retried on EINTR (PEP 475)
    wall = time.perf_counter() - t0
    if timeout:
        signal.setitimer(signal.ITIMER_REAL, 0)

    if timed_out:
        rc = 124
        with open(err_path, "ab") as err:
            err.write(("timeit: killed after %g s timeout\n" % timeout).encode())
    elif os.WIFSIGNALED(status):
        rc = 128 + os.WTERMSIG(status)
    else:
        rc = os.WEXITSTATUS(status)
    print("%.6f %d %d" % (wall, ru.ru_maxrss, rc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
