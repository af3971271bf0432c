#!/usr/bin/env python3
# exit_orphan.py COMM - a child that dies while its parent is in do_exit()
# (test_stat_orphans.sh).  P1 forks P2 (named COMM), then fills 1 GiB and
# exits, so its exit spends long unmapping it.  P2 waits until P1's
# /proc status has no VmRSS (P1's exit_mm() has taken its mm away: P1 is
# past its sched_process_exit on kernels >= 6.16, where that event comes
# before exit_mm()) and exits at once, before P1's last switch-out.  P1
# never waits for P2: init reaps it, and its counts are not in the
# command's rusage.
import ctypes
import mmap
import os
import sys
import time

p1 = os.fork()
if p1 == 0:
    me = os.getpid()
    p2 = os.fork()
    if p2 == 0:
        ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)
        while True:
            try:
                with open("/proc/%d/status" % me) as f:
                    if "VmRSS" not in f.read():
                        break
            except OSError:
                break
            time.sleep(0.0005)
        os._exit(0)
    m = mmap.mmap(-1, 1 << 30)
    for off in range(0, len(m), 4096):
        m[off] = 1
    os._exit(0)
os.waitpid(p1, 0)
time.sleep(0.1)
