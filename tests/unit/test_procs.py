"""launcher/procs.py on real processes: pidfd liveness (a zombie counts as exited), the
PF_EXITING check, and kill_strays (kills a forked tree, spares what it is told to keep)."""
import os
import signal
import time

from launcher.contain.procs import Proc, descendants, exiting, kill_strays, state_of


def _fork_sleeper(seconds: float = 30) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            time.sleep(seconds)
        finally:
            os._exit(0)
    return pid


def test_alive_and_exiting_follow_the_process():
    pid = _fork_sleeper()
    p = Proc(pid)
    try:
        assert p.alive() and not exiting(pid)
        p.kill()
        assert p.wait_exiting(5) and exiting(pid)
        assert p.wait_dead(5) and not p.alive()
        assert state_of(pid) == "Z"  # not reaped yet: a zombie is dead for alive() and exiting()
        assert exiting(pid)
    finally:
        os.waitpid(pid, 0)
        p.close()
    assert exiting(pid)  # gone altogether
    assert not p.alive()  # closed pidfd


def test_wait_exiting_with_no_fd_left_waits_on_the_pidfd():
    """Out of file descriptors (/proc unreadable) it waits for the exit on the pidfd instead of
    raising: the launcher's promote waited here for killed socket readers, and an EMFILE raised
    before the promotion was sent lost the session's head (seen in tests/faults/test_faults_resources.py)."""
    import resource
    pid = _fork_sleeper()
    p = Proc(pid)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    held = []
    try:
        p.kill()
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 8, hard))
        try:
            while True:  # take every fd left
                held.append(os.open("/dev/null", os.O_RDONLY))
        except OSError:
            pass
        try:
            open(f"/proc/{pid}/stat").close()
            raise AssertionError("the fd limit did not bite")
        except OSError:
            pass
        assert p.wait_exiting(5)
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        os.waitpid(pid, 0)
        p.close()


def test_kill_strays_spares_kept_and_kills_the_rest():
    r, w = os.pipe()
    root = os.fork()
    if root == 0:  # root -> keep + stray -> grandchild stray
        import prctl
        # as a session's keeper is: a grandchild whose parent is killed first comes back to root
        # (to be found in the next round), not to the test's init
        prctl.set_child_subreaper(True)
        os.close(r)
        keep = _fork_sleeper()
        stray = os.fork()
        if stray == 0:
            _fork_sleeper()
            time.sleep(30)
            os._exit(0)
        os.write(w, f"{keep} {stray}".encode())
        while True:
            try:
                os.wait()
            except ChildProcessError:
                time.sleep(30)
    os.close(w)
    keep, stray = map(int, os.read(r, 100).split())
    os.close(r)
    try:
        deadline = time.monotonic() + 5
        while len(descendants(root)) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        tree = descendants(root)
        assert len(tree) == 3, tree
        killed = kill_strays(root, {keep})
        assert keep not in killed and stray in killed and len(killed) == 2, (killed, tree)
        assert all(exiting(p) for p in killed)
        assert state_of(keep) not in (None, "Z", "X")
    finally:
        os.kill(root, signal.SIGKILL)
        os.waitpid(root, 0)
        try:
            os.kill(keep, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_kill_strays_finds_the_children_of_a_dying_parent():
    """root -> parent (kept, SIGKILLed: 'dying') -> child: the child is killed although it is being
    reparented to root while the walk runs (read from the dying parent's list before the walk)."""
    r, w = os.pipe()
    root = os.fork()
    if root == 0:
        import prctl
        prctl.set_child_subreaper(True)  # orphans come back to root, as to a session's init
        os.close(r)
        parent = os.fork()
        if parent == 0:
            child = _fork_sleeper()
            os.write(w, str(child).encode())
            time.sleep(30)
            os._exit(0)
        while True:
            try:
                os.wait()
            except ChildProcessError:
                time.sleep(30)
            except InterruptedError:
                pass
    os.close(w)
    child = int(os.read(r, 100))
    os.close(r)
    try:
        parent = next(p for p in descendants(root) if p != child)
        Proc(parent).kill()
        killed = kill_strays(root, {parent}, dying=[parent])
        assert killed == [child], (killed, child, parent)
        assert exiting(child)
    finally:
        os.kill(root, signal.SIGKILL)
        os.waitpid(root, 0)
