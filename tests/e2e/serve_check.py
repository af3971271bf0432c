#!/usr/bin/env python3
"""serve_check.py - helpers of the tests/e2e/test_serve*.sh scripts.

  serve_check.py procsnap CGDIR...        per cgroup directory: the sum of
        voluntary/nonvoluntary_ctxt_switches (/proc/TID/status) and of
        run_delay (/proc/TID/schedstat) over its threads, as JSON
  serve_check.py get URL                  one scrape, parsed, as JSON
  serve_check.py window A0 A1 P0 P1 CGA CGB
        compare the per-cgroup switch, run and wait deltas of two scrapes
        (A0, A1 JSON) with the /proc and cpu.stat deltas (P0, P1 JSON);
        prints the figures, exits 1 on a mismatch
  serve_check.py runwin A0 A1 P0 P1 CG DIR
        one cgroup over a window: switches by kind exactly as /proc, run
        time as cpu.stat's usage (1% + 5 ms), runnable wait as schedstat's
        run_delay (10% + 5 ms)
  serve_check.py storm URL N               50 concurrent scrapes, clients
        that drop the connection mid-body and a slow reader; checks every
        counter is monotonic and nothing was lost
"""
import json
import re
import socket
import sys
import threading
import time
import urllib.request

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """Samples of an exposition: {"name{k=v,...}": value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        m = LINE.match(line)
        if not m:
            raise ValueError('bad sample line: %r' % line)
        labels = sorted(LABEL.findall(m.group(3) or ''))
        key = m.group(1) + '{' + ','.join('%s=%s' % kv for kv in labels) + '}'
        if key in out:
            raise ValueError('duplicate series %s' % key)
        out[key] = float(m.group(4))
    return out


def fetch(url, accept=None):
    req = urllib.request.Request(url)
    if accept:
        req.add_header('Accept', accept)
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.status, r.headers.get('Content-Type', ''), r.read().decode()


def procsnap(dirs):
    res = {}
    for d in dirs:
        vol = invol = delay = 0
        tids = open(d + '/cgroup.threads').read().split()
        for tid in tids:
            try:
                for line in open('/proc/%s/status' % tid):
                    if line.startswith('voluntary_ctxt_switches'):
                        vol += int(line.split()[1])
                    elif line.startswith('nonvoluntary_ctxt_switches'):
                        invol += int(line.split()[1])
                delay += int(open('/proc/%s/schedstat' % tid).read().split()[1])
            except OSError:
                pass
        usage = 0
        for line in open(d + '/cpu.stat'):
            if line.startswith('usage_usec '):
                usage = int(line.split()[1]) * 1000
        res[d] = {'voluntary': vol, 'involuntary': invol,
                  'run_delay_ns': delay, 'usage_ns': usage,
                  'tids': sorted(tids)}
    return res


def window(a0, a1, p0, p1, cga, cgb):
    m0 = json.load(open(a0))
    m1 = json.load(open(a1))
    s0 = json.load(open(p0))
    s1 = json.load(open(p1))
    bad = 0

    def d(key):
        return m1.get(key, 0) - m0.get(key, 0)

    for cg in (cga, cgb):
        rel = cg['rel']
        for kind in ('voluntary', 'involuntary'):
            ours = d('ctxmon_cgroup_switches_total{cgroup=%s,kind=%s}'
                     % (rel, kind))
            kern = s1[cg['dir']][kind] - s0[cg['dir']][kind]
            print('  %s %s: ctxmon %d, /proc %d' % (rel, kind, ours, kern))
            if ours != kern:
                print('FAIL: %s %s switches: ctxmon %d != /proc %d'
                      % (rel, kind, ours, kern), file=sys.stderr)
                bad += 1
        if s1[cg['dir']]['voluntary'] + s1[cg['dir']]['involuntary'] <= \
                s0[cg['dir']]['voluntary'] + s0[cg['dir']]['involuntary']:
            print('FAIL: %s did not switch in the window' % rel,
                  file=sys.stderr)
            bad += 1
        causes = {}
        for k in m1:
            mm = re.match(r'ctxmon_cgroup_switch_causes_total\{cause=(.*),'
                          r'cgroup=%s\}$' % re.escape(rel), k)
            if mm:
                causes[mm.group(1)] = d(k)
        kinds = sum(d('ctxmon_cgroup_switches_total{cgroup=%s,kind=%s}'
                      % (rel, kd)) for kd in ('voluntary', 'involuntary',
                                              'exit'))
        print('  %s causes: %s' % (rel, ', '.join(
            '%s %d' % kv for kv in sorted(causes.items()) if kv[1])))
        if sum(causes.values()) != kinds:
            print('FAIL: %s causes sum to %d, kinds to %d'
                  % (rel, sum(causes.values()), kinds), file=sys.stderr)
            bad += 1
        raw_tp = any(k.startswith('ctxmon_build_info{programs=raw_tp')
                     for k in m1)
        if raw_tp:  # no registers, no syscall: blocked, and no yield
            cg = dict(cg, blocks_in='blocked')
        if cg.get('blocks_in') and causes.get(cg['blocks_in'], 0) < 0.9 * d(
                'ctxmon_cgroup_switches_total{cgroup=%s,kind=voluntary}' % rel):
            print('FAIL: %s: fewer than 90%% of the voluntary switches in %s'
                  % (rel, cg['blocks_in']), file=sys.stderr)
            bad += 1
        if causes.get('yield', 0):
            print('FAIL: %s: %d switches in sched_yield, which neither '
                  'workload calls' % (rel, causes['yield']), file=sys.stderr)
            bad += 1
        run = d('ctxmon_cgroup_run_seconds_total{cgroup=%s}' % rel)
        usage = (s1[cg['dir']]['usage_ns'] - s0[cg['dir']]['usage_ns']) / 1e9
        print('  %s run: ctxmon %.6f s, cpu.stat usage %.6f s'
              % (rel, run, usage))
        if cg.get('run_exact') and abs(run - usage) > 0.01 * usage + 0.005:
            print('FAIL: %s run %.6f s vs cpu.stat usage %.6f s'
                  % (rel, run, usage), file=sys.stderr)
            bad += 1
        wait = d('ctxmon_cgroup_runnable_wait_seconds_total{cgroup=%s}' % rel)
        delay = (s1[cg['dir']]['run_delay_ns'] -
                 s0[cg['dir']]['run_delay_ns']) / 1e9
        print('  %s runnable wait: ctxmon %.6f s, schedstat run_delay %.6f s'
              % (rel, wait, delay))
        if delay > 0 and abs(wait - delay) > 0.1 * delay + 0.005:
            print('FAIL: %s runnable wait %.6f s vs run_delay %.6f s'
                  % (rel, wait, delay), file=sys.stderr)
            bad += 1
        # the kernel moves time from wait to run at a wakeup preemption
        # (docs/metrics.md): the sum is the same both ways
        print('  %s run + wait: ctxmon %.6f s, usage + run_delay %.6f s'
              % (rel, run + wait, usage + delay))
        if abs(run + wait - usage - delay) > 0.01 * (usage + delay) + 0.005:
            print('FAIL: %s run + wait %.6f s vs usage + run_delay %.6f s'
                  % (rel, run + wait, usage + delay), file=sys.stderr)
            bad += 1
    ab = d('ctxmon_cgroup_victim_wait_seconds_total{culprit=%s,victim=%s}'
           % (cgb['rel'], cga['rel']))
    ba = d('ctxmon_cgroup_victim_wait_seconds_total{culprit=%s,victim=%s}'
           % (cga['rel'], cgb['rel']))
    print('  victim %s / culprit %s: %.6f s; the reverse: %.6f s'
          % (cga['rel'], cgb['rel'], ab, ba))
    if not ab > ba or not ab > 0:
        print('FAIL: the latency-sensitive cgroup is not the victim of the '
              'hog (%.6f s vs %.6f s)' % (ab, ba), file=sys.stderr)
        bad += 1
    # every culprit of A: B must be the first after A itself
    culprits = {}
    for k in m1:
        mm = re.match(r'ctxmon_cgroup_victim_wait_seconds_total\{culprit=(.*),'
                      r'victim=%s\}$' % re.escape(cga['rel']), k)
        if mm:
            culprits[mm.group(1)] = d(k)
    total_a = d('ctxmon_cgroup_runnable_wait_seconds_total{cgroup=%s}'
                % cga['rel'])
    if abs(sum(culprits.values()) - total_a) > 0.05 * total_a + 0.001:
        print('FAIL: %s: culprit parts sum to %.6f s, its wait is %.6f s'
              % (cga['rel'], sum(culprits.values()), total_a),
              file=sys.stderr)
        bad += 1
    print('  culprits of %s: %s' % (cga['rel'], ', '.join(
        '%s %.3f s' % kv for kv in sorted(culprits.items(),
                                          key=lambda kv: -kv[1]))))
    # on a shared machine other cgroups' tasks run there too: b must be
    # among a's culprits, not necessarily the first
    if culprits.get(cgb['rel'], 0) <= 0:
        print('FAIL: %s is no culprit of %s' % (cgb['rel'], cga['rel']),
              file=sys.stderr)
        bad += 1
    return 1 if bad else 0


COUNTER_SUFFIX = ('_total{', '_count{', '_sum{', '_bucket{')


def monotonic(seq, what):
    """seq: parsed scrapes in time order; counters must never go down."""
    bad = 0
    for prev, cur in zip(seq, seq[1:]):
        for k, v in prev.items():
            if not any(s in k for s in COUNTER_SUFFIX):
                continue
            if k in cur and cur[k] < v:
                print('FAIL: %s: %s went from %s to %s' % (what, k, v, cur[k]),
                      file=sys.stderr)
                bad += 1
    return bad


def drop_mid_body(host, port):
    s = socket.create_connection((host, port), timeout=30)
    s.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n')
    got = s.recv(2000)
    # reset, not a clean close: the server is mid-write
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\0\0\0\0\0\0\0')
    s.close()
    return len(got)


def slow_reader(host, port, seconds, out):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect((host, port))
    s.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n')
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        b = s.recv(64)
        if not b:
            break
        n += len(b)
        time.sleep(0.05)
    s.close()
    out.append(n)


def storm(url, n):
    host, port = re.match(r'http://([^:/]+):(\d+)/', url).groups()
    port = int(port)
    om = 'application/openmetrics-text; version=1.0.0'
    seq = []
    st, _, body = fetch(url)
    before = parse(body)
    seq.append(before)
    results, errors = [], []

    def one(i):
        try:
            acc = om if i % 2 else None
            status, ctype, text = fetch(url, acc)
            if status != 200:
                raise RuntimeError('status %d' % status)
            if acc and (not ctype.startswith('application/openmetrics-text')
                        or not text.endswith('# EOF\n')):
                raise RuntimeError('OpenMetrics asked, got %s' % ctype)
            if not acc and not ctype.startswith('text/plain'):
                raise RuntimeError('text asked, got %s' % ctype)
            results.append(parse(text))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append('%d: %s' % (i, e))

    slow = []
    ts = [threading.Thread(target=slow_reader, args=(host, port, 3, slow))]
    ts += [threading.Thread(target=one, args=(i,)) for i in range(n)]
    ts += [threading.Thread(target=drop_mid_body, args=(host, port))
           for _ in range(5)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    after = parse(fetch(url)[2])
    col = 'ctxmon_collections_total{}'
    print('  %d concurrent scrapes: %d answered, %d errors; slow reader got '
          '%s bytes; collections %d -> %d during the storm'
          % (n, len(results), len(errors), slow, before[col], after[col]))
    bad = len(errors)
    for e in errors[:5]:
        print('FAIL: scrape %s' % e, file=sys.stderr)
    results.sort(key=lambda r: r[col])
    bad += monotonic([before] + results + [after], 'concurrent scrapes')
    if after[col] <= before[col]:
        print('FAIL: no collection during the storm', file=sys.stderr)
        bad += 1
    lost = after.get('ctxmon_lost_events_total{}', -1)
    over = sum(v for k, v in after.items()
               if k.startswith('ctxmon_overflow_events_total'))
    runs = [after[k] - before.get(k, 0) for k in after
            if k.startswith('ctxmon_bpf_program_runs_total{program=switch')]
    print('  lost events %d, overflow events %d, switch program runs '
          'during the storm %s' % (lost, over, runs))
    if lost != 0 or over != 0:
        print('FAIL: lost %d, overflow %d' % (lost, over), file=sys.stderr)
        bad += 1
    return 1 if bad else 0


def runwin(a0, a1, p0, p1, rel, cgdir):
    m0, m1 = json.load(open(a0)), json.load(open(a1))
    s0, s1 = json.load(open(p0))[cgdir], json.load(open(p1))[cgdir]
    bad = 0

    def d(key):
        return m1.get(key, 0) - m0.get(key, 0)

    def near(what, ours, kern, rel_tol, abs_tol):
        nonlocal bad
        ok = abs(ours - kern) <= rel_tol * kern + abs_tol
        print('  %s %s: ctxmon %.6f, kernel %.6f%s'
              % (rel, what, ours, kern, '' if ok else '  FAIL'))
        bad += not ok

    for kind in ('voluntary', 'involuntary'):
        near(kind + ' switches', d('ctxmon_cgroup_switches_total{cgroup=%s,'
                                   'kind=%s}' % (rel, kind)),
             s1[kind] - s0[kind], 0, 0)
    near('run (s)', d('ctxmon_cgroup_run_seconds_total{cgroup=%s}' % rel),
         (s1['usage_ns'] - s0['usage_ns']) / 1e9, 0.01, 0.005)
    near('runnable wait (s)',
         d('ctxmon_cgroup_runnable_wait_seconds_total{cgroup=%s}' % rel),
         (s1['run_delay_ns'] - s0['run_delay_ns']) / 1e9, 0.1, 0.005)
    return 1 if bad else 0


def main():
    cmd = sys.argv[1]
    if cmd == 'procsnap':
        json.dump(procsnap(sys.argv[2:]), sys.stdout)
    elif cmd == 'get':
        json.dump(parse(fetch(sys.argv[2])[2]), sys.stdout)
    elif cmd == 'window':
        a0, a1, p0, p1, ra, da, rb, db = sys.argv[2:10]
        # a sleeps in nanosleep()
        sys.exit(window(a0, a1, p0, p1,
                        {'rel': ra, 'dir': da, 'blocks_in': 'sleep'},
                        # b spins: its run time is the kernel's count
                        {'rel': rb, 'dir': db, 'run_exact': True}))
    elif cmd == 'runwin':
        sys.exit(runwin(*sys.argv[2:8]))
    elif cmd == 'storm':
        sys.exit(storm(sys.argv[2], int(sys.argv[3])))
    else:
        sys.exit('unknown command ' + cmd)


if __name__ == '__main__':
    main()
