# id: re12-sched-class
# category: resource
# effect: leave the SCHED_BATCH class: back to SCHED_OTHER, real-time FIFO/RR, sched_setattr, a lower nice value
# touches_os: yes
# destructive: yes
# fast: no
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def err(f):
    try:
        f()
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

def sched_setattr(policy, nice):
    # struct sched_attr (VER0, 48 bytes): size, policy, flags, nice, priority, runtime, deadline, period
    attr = (ctypes.c_uint32 * 12)(48, policy, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    attr[3] = ctypes.c_uint32(nice & 0xffffffff).value
    r = libc.syscall(314, 0, attr, 0)
    if r < 0:
        raise OSError(ctypes.get_errno(), "sched_setattr")

def policy_and_nice():
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[38]), int(fields[16])   # policy (field 41), nice (field 19)

before = policy_and_nice()
res = {
    "other": err(lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))),
    "fifo": err(lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))),
    "rr": err(lambda: os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1))),
    "setattr": err(lambda: sched_setattr(0, -5)),
    "nice": err(lambda: os.setpriority(os.PRIO_PROCESS, 0, -5)),
}
after = policy_and_nice()
print("ESCAPE-RESULT: " + " ".join("%s=%s" % kv for kv in res.items())
      + " errno=%s policy_before=%d policy_after=%d nice_after=%d" % (res["other"], before[0], after[0], after[1]))
if after[0] != 3 or after[1] < 0:
    print("ESCAPE-RESULT: escaped=sched-class-policy-%d-nice-%d" % after)
