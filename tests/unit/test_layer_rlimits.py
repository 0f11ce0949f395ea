"""Resource-limit layer on the real kernel, in a session-like child (fresh user+pid
namespaces, where we are root of the namespace — which gives no capability over the
host's scheduler or its rlimit ceilings)."""
import os
import resource

from jail.layers.rlimits import apply_rlimits

from jailchild import errno_of, in_session


def _apply():
    return apply_rlimits(memory_mb=256, nproc=64, nofile=64, cpu_s=5)


def test_limits_set_and_read_back():
    def fn():
        ev = _apply()
        return {"ev": ev, "now": {n: resource.getrlimit(getattr(resource, n)) for n in ev if n.startswith("RLIMIT")},
                "sched": os.sched_getscheduler(0)}

    out = in_session(fn)["ok"]
    ev, now = out["ev"], out["now"]
    assert ev["sched"] == "SCHED_BATCH" and out["sched"] == os.SCHED_BATCH
    for name in ("RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_MEMLOCK", "RLIMIT_MSGQUEUE", "RLIMIT_NICE", "RLIMIT_RTPRIO"):
        assert now[name] == [0, 0], name
    assert now["RLIMIT_NPROC"] == [64, 64] and now["RLIMIT_NOFILE"] == [64, 64] and now["RLIMIT_CPU"] == [5, 5]


def test_limits_bite():
    def fn():
        _apply()
        res = {}
        try:
            bytearray(512 << 20)
            res["alloc"] = "OK"
        except MemoryError:
            res["alloc"] = "MemoryError"
        fd = os.open("/dev/shm", os.O_TMPFILE | os.O_WRONLY, 0o600)
        res["write"] = errno_of(lambda: os.write(fd, b"x"))
        os.close(fd)
        res["fds"] = errno_of(lambda: [os.open("/dev/null", os.O_RDONLY) for _ in range(100)])
        try:  # CPython turns EPERM from setrlimit into ValueError
            resource.setrlimit(resource.RLIMIT_NOFILE, (65, 65))
            res["raise_nofile"] = "OK"
        except ValueError:
            res["raise_nofile"] = "refused"
        return res

    out = in_session(fn)["ok"]
    assert out == {"alloc": "MemoryError", "write": "EFBIG", "fds": "EMFILE", "raise_nofile": "refused"}, out


def test_scheduling_class_cannot_be_raised():
    """Even with seccomp off (which denies sched_setscheduler and setpriority outright), a jailed
    process cannot take a real-time class or lower its nice value. It *can* go back from
    SCHED_BATCH to SCHED_OTHER (the kernel lets any task do that): only seccomp stops that,
    and it would only give back wakeup preemption, no priority over other tasks."""
    def fn():
        _apply()
        return {
            "to_fifo": errno_of(lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))),
            "to_rr": errno_of(lambda: os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1))),
            "nice_down": errno_of(lambda: os.setpriority(os.PRIO_PROCESS, 0, -1)),
            "sched": os.sched_getscheduler(0),
            "forked_child": _child_sched(),
            "to_other": errno_of(lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))),
        }

    out = in_session(fn)["ok"]
    assert out["to_fifo"] == "EPERM" and out["to_rr"] == "EPERM" and out["nice_down"] in ("EPERM", "EACCES")
    assert out["to_other"] == "OK"  # documents the kernel's rule; seccomp is what denies it in a session
    assert out["sched"] == os.SCHED_BATCH and out["forked_child"] == os.SCHED_BATCH


def _child_sched() -> int:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(w, str(os.sched_getscheduler(0)).encode())
        os._exit(0)
    os.close(w)
    val = int(os.read(r, 16))
    os.close(r)
    os.waitpid(pid, 0)
    return val

