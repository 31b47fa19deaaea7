# Copyright (c) 2026 The ovs-netdev-vhost authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at:
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""The Python of the test suite (tests/*.at), as one program:

    python3 tests/ovs_vhost_checks.py COMMAND ARG...

The shell functions of the .at files run it through $NETDEV_VHOST_CHECKS
(tests/atlocal); each COMMAND is a function below, named as the command
with "_" for "-", whose comment says what it takes and prints.  Counters of
netdev-vhost/stats are read with utilities/ovs_vhost_stats.py, the one
parser of that output.  Every wait here is bounded in wall-clock seconds.
"""

import json
import os
import re
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, 'utilities'))
from ovs_vhost_stats import delta, load as snap  # noqa: E402


# Shared pieces.

def phase(tag, *suffixes):
    """The saved netdev-vhost/stats of a traffic phase: one dict per suffix,
    from the files TAG + SUFFIX (e.g. phase('p1', '.b1', '.a1'))."""
    return [snap(tag + s) for s in suffixes]


def grew(before, after):
    """A function of a counter name: how much it grew from snapshot
    'before' to 'after' (absent counters count as 0)."""
    return lambda name: delta(before, after, name)


def report(checks):
    """Prints, for each (text, ok, numbers) of 'checks', the text when ok
    and "MISMATCH: text: numbers" when not."""
    for text, ok, numbers in checks:
        print(text if ok else 'MISMATCH: %s: %s' % (text, numbers))


def fold(t):
    """The one's complement sum 't' folded into 16 bits."""
    while t >> 16:
        t = (t & 0xffff) + (t >> 16)
    return t


def sum16(b):
    """The sum of the big-endian 16-bit words of bytes 'b' (padded)."""
    if len(b) % 2:
        b += b'\0'
    return sum(struct.unpack('!%dH' % (len(b) // 2), b))


def csum(b):
    """The Internet checksum of bytes 'b'."""
    return ~fold(sum16(b)) & 0xffff


def vnet_socket(port):
    """An AF_PACKET socket bound to network device 'port' that sends frames
    with a struct virtio_net_hdr in front (PACKET_VNET_HDR)."""
    import socket
    SOL_PACKET, PACKET_VNET_HDR = 263, 15
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    s.bind((port, 0))
    return s


ETH_TO_GUEST = bytes.fromhex('020000000002' '020000000001' '0800')
IP_SRC, IP_DST = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])


def tcp_frame(i, size, tcp_csum):
    """Frame 'i' of a TCP/IPv4 stream 10.0.0.1:1234 -> 10.0.0.2:80
    (Ethernet 02:00:00:00:00:01 -> 02:00:00:00:00:02), 'size' bytes of
    payload after the headers, 'tcp_csum' in the TCP checksum field; the
    IPv4 checksum is right.  Returns the frame without its payload."""
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40 + size, i, 0x4000, 64, 6,
                     0, IP_SRC, IP_DST)
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    tcp = struct.pack('!HHIIBBHHH', 1234, 80, i * size, 0, 5 << 4, 0x18,
                      65535, tcp_csum, 0)
    return ETH_TO_GUEST + ip + tcp


def libc_ptrace():
    """libc with ptrace() declared, for the ptrace commands."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                            ctypes.c_void_p]
    libc.ptrace.restype = ctypes.c_long
    return libc


# ptrace requests, x86-64's struct user_regs_struct, waitpid's __WALL.
PEEKTEXT, POKETEXT, CONT, GETREGS, SETREGS, DETACH = 1, 4, 7, 12, 13, 17
SEIZE, INTERRUPT = 0x4206, 0x4207
ORIG_RAX, RIP, N_REGS = 15, 16, 27
WALL = 0x40000000


def wait_file(path, bound_s=600):
    """Waits (polling every 10 ms) until file 'path' exists, for at most
    'bound_s' seconds of wall-clock time: the test's shell creates it, and
    on_exit does at the latest.  Past the bound it says so on stderr and
    returns, so that a frozen or stopped thread is never left behind."""
    end = time.time() + bound_s
    while not os.path.exists(path):
        if time.time() > end:
            sys.stderr.write('%s did not appear within %d s\n'
                             % (path, bound_s))
            return
        time.sleep(0.01)


# Logs.

# Stock OVS's and DPDK's noise (none is ours): the DPDK vhost library's
# lines (stock OVS logs the same) of a guest that goes away mid-message, a
# client port connecting before its server listens (DPDK retries), a
# virtqueue found ahead after a restart; and, like timeval's long poll
# intervals, OVS's RCU thread waiting a second for the main thread on a
# loaded machine (seen once at exit under AddressSanitizer while the other
# platform's suite ran: a hang would fail the test's bounded waits).  And
# the summary of OVS's own rate limit on DPDK's log (lib/dpdk.c
# dpdk_log_write(), 600 lines a minute for every level): connection churn
# on a loaded machine outruns it with DPDK's INFO lines, and vlog writes
# "Dropped N log messages" at the level of the next line let through,
# which this list checks on its own (seen once at WARN in the 100
# connect/disconnect cycles of a suite beside two busy processes).
LOG_STOCK = r'''
dpdk|^EAL: No free [0-9]+ kB hugepages reported
dpdk|^TELEMETRY: No legacy callbacks, legacy socket not created
timeval|^(Unreasonably long [0-9]+ms poll interval|context switches: |faults: |disk: )
ovs_rcu|^blocked [0-9]+ ms waiting for main to quiesce$
dpdk|^Dropped [0-9]+ log messages in last [0-9]+ seconds \(most recently, [0-9]+ seconds ago\) due to excessive rate$
dpdk|^VHOST_CONFIG: \(.*\) (recvmsg failed on fd [0-9]+ \(Connection reset by peer\)|vhost read message failed|sendmsg error on fd [0-9]+ \(Broken pipe\)|failed to connect: (No such file or directory|Connection refused)|last_used_idx \([0-9]+\) and vq->used->idx \([0-9]+\) mismatches;|some packets maybe resent for Tx and dropped for Rx)$
'''


def log_problems(log, entries=''):
    """The one log allow-list: prints the WARN, ERR and EMER lines of the
    ovs-vswitchd log 'log' that no entry allows.  An entry "MODULE|REGEX"
    allows a line of vlog module MODULE (its thread name in parentheses
    aside) whose message REGEX (searched) matches.  The entries: LOG_STOCK,
    then ./log-allow (the test's own, shell function log_allow), then
    'entries' (one a line)."""
    text = LOG_STOCK
    if os.path.exists('log-allow'):
        text += open('log-allow').read()
    text += '\n' + entries
    allowed = []
    for line in text.splitlines():
        if '|' in line:
            mod, rx = line.split('|', 1)
            allowed.append((mod.strip(), re.compile(rx)))
    for line in open(log, errors='replace'):
        f = line.rstrip('\n').split('|', 4)
        if len(f) < 5 or f[3] not in ('WARN', 'ERR', 'EMER'):
            continue
        mod = f[2].split('(')[0]
        if not any(m == mod and r.search(f[4]) for m, r in allowed):
            print(line, end='')


def json_get(path, key):
    """The value of KEY ("a.b" for a nested one, a number for an array's
    element; "" for the whole document) of the JSON document in file
    'path'."""
    v = json.load(open(path))
    for k in key.split('.') if key else ():
        v = v[int(k)] if isinstance(v, list) else v[k]
    return v


def json_field(path, key):
    """Prints the value of KEY ("a.b" for a nested one, a number for an
    array's element) of the JSON object in file 'path'."""
    print(json_get(path, key))


def json_keys(path, key=''):
    """Prints the member names of the JSON object at KEY (as json_field();
    "" or absent: the top) of file 'path', sorted, one a line, each with
    the type of its value (int, str, bool, list, dict, null)."""
    v = json_get(path, key)
    names = {bool: 'bool', int: 'int', str: 'str', list: 'list',
             dict: 'dict', type(None): 'null'}
    for k in sorted(v):
        print(k, names.get(type(v[k]), 'other'))


def stats_same(json_path, text_path):
    """Prints "same counters" if the JSON netdev-vhost/stats in file
    'json_path' has exactly the names of the text one in 'text_path', each
    an integer, else the differences (utilities/ovs_vhost_stats.py parses
    the text)."""
    import ovs_vhost_stats
    doc = json.load(open(json_path))
    text = ovs_vhost_stats.load(text_path)
    bad = sorted(k for k, v in doc.items()
                 if not isinstance(v, int) or isinstance(v, bool))
    only_json = sorted(set(doc) - set(text))
    only_text = sorted(set(text) - set(doc))
    if bad or only_json or only_text:
        print('not integers: %s; only in JSON: %s; only in text: %s'
              % (bad, only_json, only_text))
    else:
        print('same counters')


# Traffic phases of the tx policy tests (TXP_PHASE in tests/txp-macros.at:
# guest reports TAG.tx.json and TAG.rx.json, snapshots TAG.b0/a0 of vhu0
# and TAG.b1/a1 of vhu1).

def txp_check(tag):
    """The relations of phase 'tag', one line each (see txp_check in
    tests/txp-macros.at)."""
    tx = json.load(open(tag + '.tx.json'))
    rx = json.load(open(tag + '.rx.json'))
    b0, a0, b1, a1 = phase(tag, '.b0', '.a0', '.b1', '.a1')
    d0, d1 = grew(b0, a0), grew(b1, a1)
    sent, recv0 = tx['tx_packets'], d0('rx_packets')
    out1, drop1 = d1('tx_packets'), d1('tx_dropped')
    flushes = sum(d1('tx_q0_flush_' + r)
                  for r in ('deadline', 'full', 'guest', 'reconfigure'))
    # Bursts sent without staging: the guest wanted no interrupt, or its
    # ring had just overflowed (the hold-off, tx_q0_bursts_ring_full).
    at_once = (d1('tx_q0_bursts') - d1('tx_q0_bursts_intr')
               + d1('tx_q0_bursts_ring_full'))
    kicks, retries = d1('tx_q0_kicks'), d1('ovs_tx_retries')
    report([
        ('vhu0 received every packet the guest sent', recv0 == sent,
         'vhu0 rx %d, guest sent %d' % (recv0, sent)),
        ('vhu1 sent or dropped every packet vhu0 received',
         out1 + drop1 == recv0,
         'vhu1 tx %d + dropped %d, vhu0 rx %d' % (out1, drop1, recv0)),
        ('the policy sent at once or staged every packet',
         d1('tx_q0_sent_immediate') + d1('tx_q0_staged') == out1 + drop1,
         'immediate %d + staged %d, vhu1 tx %d + dropped %d'
         % (d1('tx_q0_sent_immediate'), d1('tx_q0_staged'), out1, drop1)),
        ('the guest received every packet vhu1 sent',
         rx['rx_packets'] == out1,
         'guest rx %d, vhu1 tx %d' % (rx['rx_packets'], out1)),
        ('the guest lost only packets counted as drops',
         rx['lost'] == tx['tx_dropped'] + drop1,
         'lost %d, sender dropped %d, vhu1 dropped %d'
         % (rx['lost'], tx['tx_dropped'], drop1)),
        ('nothing left staged', a1.get('tx_q0_staged_now') == 0,
         'staged_now %s' % a1.get('tx_q0_staged_now')),
        ('no packet found without its kick (late 0)', rx.get('late') == 0,
         'late %s' % rx.get('late')),
        ('no mbuf left in use or freed twice',
         a1.get('ovs_mempool_in_use') == 0
         and a1.get('ovs_mempool_overfreed', 0) == 0,
         'in use %s, over-freed %s' % (a1.get('ovs_mempool_in_use'),
                                       a1.get('ovs_mempool_overfreed'))),
        ('no packet reordered or duplicated',
         rx['reordered'] == 0 and rx['duplicates'] == 0,
         'reordered %d, duplicates %d' % (rx['reordered'],
                                          rx['duplicates'])),
        ('kicks <= flushes + bursts sent at once + retries',
         kicks <= flushes + at_once + retries,
         'kicks %d, flushes %d, at once %d, retries %d'
         % (kicks, flushes, at_once, retries)),
    ])


def txp_summary(tag):
    """One line of the numbers of phase 'tag' (see txp_summary in
    tests/txp-macros.at)."""
    rx = json.load(open(tag + '.rx.json'))
    b1, a1 = phase(tag, '.b1', '.a1')
    d = grew(b1, a1)
    out, kicks = d('tx_packets'), d('tx_q0_kicks')
    lat = rx.get('latency_us') or {}
    print('%s: delivered %d dropped %d kicks %d kicks/packet %.4f '
          'wakeups %d p50 %s p99 %s us bursts %d intr %d immediate %d '
          'staged %d flushes deadline %d full %d guest %d reconfigure %d '
          'retries %d max_wait_us %d'
          % (tag, out, d('tx_dropped'), kicks, kicks / out if out else 0,
             rx['wakeups'], lat.get('p50'), lat.get('p99'),
             d('tx_q0_bursts'), d('tx_q0_bursts_intr'),
             d('tx_q0_sent_immediate'), d('tx_q0_staged'),
             d('tx_q0_flush_deadline'), d('tx_q0_flush_full'),
             d('tx_q0_flush_guest'), d('tx_q0_flush_reconfigure'),
             d('ovs_tx_retries'), a1.get('tx_q0_max_wait_us', 0)))


def txp_fewer_kicks(base, tag, factor):
    """Prints "TAG: kicks per packet at least FACTOR times lower than BASE"
    if vhu1's kicks per delivered packet in phase 'tag' times 'factor' is
    at most that of phase 'base', or "MISMATCH" with both."""
    factor = float(factor)

    def kpp(t):
        b, a = phase(t, '.b1', '.a1')
        kicks = a['tx_q0_kicks'] - b.get('tx_q0_kicks', 0)
        out = a['tx_packets'] - b.get('tx_packets', 0)
        return kicks, out
    kb, ob = kpp(base)
    kt, ot = kpp(tag)
    if ob and ot and kt * factor * ob <= kb * ot:
        print('%s: kicks per packet at least %g times lower than %s'
              % (tag, factor, base))
    else:
        print('MISMATCH: %s: %d kicks / %d packets, %s: %d kicks / %d '
              'packets' % (tag, kt, ot, base, kb, ob))


# The reliability tests (tests/system-reliability.at).

def rel_check(tag, ordered=None):
    """The relations of phase 'tag', one line each, for any number of
    queues, and the numbers on stderr (see rel_check in
    tests/system-reliability.at); 'ordered' given: no packet reordered."""
    tx = json.load(open(tag + '.tx.json'))
    rx = json.load(open(tag + '.rx.json'))
    b0, a0, b1, a1 = phase(tag, '.b0', '.a0', '.b1', '.a1')
    d0, d1 = grew(b0, a0), grew(b1, a1)

    def qsum(suffix, snapshot=None):
        keys = [k for k in set(a1) | set(b1)
                if re.match(r'tx_q\d+_' + suffix + '$', k)]
        if snapshot is not None:
            return sum(snapshot.get(k, 0) for k in keys)
        return sum(d1(k) for k in keys)
    sent, recv0 = tx['tx_packets'], d0('rx_packets')
    out1, drop1 = d1('tx_packets'), d1('tx_dropped')
    policy = qsum('sent_immediate') + qsum('staged')
    enq_drops, staged_drops = d1('ovs_tx_failure_drops'), qsum('staged_drops')
    flushed = rx.get('rx_flushed', 0)
    checks = [
        ('vhu0 received every packet the guest sent', recv0 == sent,
         'vhu0 rx %d, guest sent %d' % (recv0, sent)),
        ('vhu1 sent or dropped every packet vhu0 received',
         out1 + drop1 == recv0,
         'vhu1 tx %d + dropped %d, vhu0 rx %d' % (out1, drop1, recv0)),
        ('the policy placed or dropped every packet it got',
         policy == out1 + enq_drops + staged_drops,
         'immediate + staged %d, vhu1 tx %d + enqueue drops %d + staged '
         'drops %d' % (policy, out1, enq_drops, staged_drops)),
        ('the guest received every packet vhu1 sent',
         rx['rx_packets'] + flushed == out1,
         'guest rx %d + flushed by its driver %d, vhu1 tx %d'
         % (rx['rx_packets'], flushed, out1)),
        ('the guest lost only packets counted as drops',
         rx['lost'] == tx['tx_dropped'] + drop1 + flushed,
         'lost %d, sender dropped %d, vhu1 dropped %d, flushed %d'
         % (rx['lost'], tx['tx_dropped'], drop1, flushed)),
        ('nothing left staged', qsum('staged_now', a1) == 0,
         'staged_now %d' % qsum('staged_now', a1)),
        ('no packet duplicated', rx['duplicates'] == 0,
         'duplicates %d' % rx['duplicates']),
    ]
    if ordered is not None:
        checks.append(('no packet reordered', rx['reordered'] == 0,
                       'reordered %d' % rx['reordered']))
    report(checks)
    print('%s: guest sent %d (its driver dropped %d), vhu0 received %d, vhu1 '
          'sent %d and dropped %d (enqueue %d, staged %d, other %d), guest '
          'received %d, flushed %d, lost %d'
          % (tag, sent, tx['tx_dropped'], recv0, out1, drop1, enq_drops,
             staged_drops, drop1 - enq_drops - staged_drops,
             rx['rx_packets'], flushed, rx['lost']), file=sys.stderr)


def rel_restart_check(tag, upcall_drops):
    """The numbers of fault 3 (see rel_restart_check in
    tests/system-reliability.at); fails (AssertionError) if a relation
    does not hold."""
    upcall_drops = int(upcall_drops)
    tx = json.load(open(tag + '.tx.json'))
    rx = json.load(open(tag + '.rx.json'))
    o0, o1, a0, a1 = phase(tag, '.o0', '.o1', '.a0', '.a1')
    new_in, new_out = a0['rx_packets'], a1['tx_packets']
    new_drop = a1['tx_dropped']
    old_out_min = o1['tx_packets']
    # The sender runs until stopped, so the receiver cannot know how many
    # sequence numbers there were: what it missed is what the sender
    # placed in its ring (tx_packets; its driver's own drops never left
    # it) less what it received.
    missed = tx['tx_packets'] - rx['rx_packets']
    counted = o1['tx_dropped'] + new_drop + upcall_drops
    lost_at_restart = missed - counted
    print('new ovs-vswitchd: vhc0 received %d, vhc1 sent %d + dropped %d, '
          'datapath dropped %d (failed upcalls while it started)'
          % (new_in, new_out, new_drop, upcall_drops))
    print('receiver got from the old one at least %d, from the new one %d'
          % (old_out_min, new_out))
    print('fault 3: sender sent %d (its driver dropped %d); receiver '
          'received %d, missed %d, of which counted as dropped %d, lost at '
          'the restart %d; duplicates %d, reordered %d'
          % (tx['tx_packets'], tx['tx_dropped'], rx['rx_packets'],
             missed, counted, lost_at_restart, rx['duplicates'],
             rx['reordered']))
    assert new_in == new_out + new_drop + upcall_drops, \
        'new ovs-vswitchd lost'
    assert rx['rx_packets'] >= old_out_min + new_out, \
        'receiver missed packets'
    assert rx['duplicates'] == 0 and rx['reordered'] == 0
    assert 0 <= lost_at_restart <= 544, \
        'lost at restart %d' % lost_at_restart


# The OVN tests (tests/ovn-macros.at: phases of OVN_TRAFFIC, guest reports
# TAG-a.json and TAG-b.json, snapshots TAG.a.b/a of PORT-A and TAG.b.b/a of
# PORT-B).

def ovn_phase(tag):
    """Guest a's and b's reports, the four snapshots and the growth
    functions of PORT-A and PORT-B of phase 'tag'."""
    a = json.load(open(tag + '-a.json'))
    b = json.load(open(tag + '-b.json'))
    ab, aa, bb, ba = phase(tag, '.a.b', '.a.a', '.b.b', '.b.a')
    return a, b, aa, ba, grew(ab, aa), grew(bb, ba)


def ovn_move_times(t0, t1, hv, lsp, port):
    """One line: how long from 't0' (ns) to 't1' (ns) and when, after t0,
    chassis 'hv''s logs show the vhost-user device 'port' added and
    ovn-controller claiming 'lsp' and setting it ovn-installed (see
    ovn_move_times in tests/ovn-macros.at)."""
    import datetime
    t0, t1 = int(t0), int(t1)

    def last(log, text):
        when = None
        for line in open('%s/%s.log' % (hv, log)):
            if text in line:
                stamp = line.split('|', 1)[0]
                dt = datetime.datetime.strptime(stamp,
                                                '%Y-%m-%dT%H:%M:%S.%fZ')
                dt = dt.replace(tzinfo=datetime.timezone.utc)
                when = dt.timestamp() * 1e3 - t0 / 1e6
        return 'at +%.0f ms' % when if when is not None else 'not logged'
    print('move: binding change (add-port on the new chassis) to traffic '
          'resuming (first echo back at the moved guest): %.0f ms; '
          'vhost-user device added %s, ovn-controller claimed %s %s, set '
          'ovn-installed %s'
          % ((t1 - t0) / 1e6,
             last('ovs-vswitchd', '/%s.sock\' has been added' % port), lsp,
             last('ovn-controller',
                  'Claiming lport %s for this chassis' % lsp),
             last('ovn-controller',
                  'Setting lport %s ovn-installed in OVS' % lsp)))


def ovn_check(tag, pa, pb, kicks_mode, path):
    """The relations of phase 'tag', one line each ('path' "exact" or
    "resumed"; 'kicks_mode' NETDEV_VHOST_KICKS; see ovn_check in
    tests/ovn-macros.at)."""
    a, b, aa, ba, da, db = ovn_phase(tag)
    exact = path == 'exact'
    b_out = db('tx_packets') + db('tx_dropped') + db('underlay_drops')
    checks = [
        ('a->b: %s received every packet guest a sent' % pa,
         da('rx_packets') == a['tx_packets'],
         '%s rx %d, guest a sent %d' % (pa, da('rx_packets'),
                                        a['tx_packets'])),
        ('a->b: %s sent or dropped every packet %s received' % (pb, pa)
         if exact else
         'a->b: %s sent or dropped what %s received once the flows were in '
         'place' % (pb, pa),
         b_out == da('rx_packets') if exact else b_out <= da('rx_packets'),
         '%s tx %d + dropped %d + underlay drops %d, %s rx %d'
         % (pb, db('tx_packets'), db('tx_dropped'), db('underlay_drops'), pa,
            da('rx_packets'))),
        ('a->b: guest b received every packet %s sent' % pb,
         b['rx_packets'] == db('tx_packets'),
         'guest b rx %d, %s tx %d' % (b['rx_packets'], pb,
                                      db('tx_packets'))),
        ('b->a: guest b echoed or counted every packet it received',
         b['echoed'] + b['echo_dropped'] == b['rx_packets'],
         'echoed %d + dropped %d, received %d'
         % (b['echoed'], b['echo_dropped'], b['rx_packets'])),
        ('b->a: %s received every packet guest b echoed' % pb,
         db('rx_packets') == b['echoed'],
         '%s rx %d, echoed %d' % (pb, db('rx_packets'), b['echoed'])),
        ('b->a: %s sent or dropped every packet %s received' % (pa, pb),
         da('tx_packets') + da('tx_dropped') + da('underlay_drops')
         == db('rx_packets'),
         '%s tx %d + dropped %d + underlay drops %d, %s rx %d'
         % (pa, da('tx_packets'), da('tx_dropped'), da('underlay_drops'),
            pb, db('rx_packets'))),
        ('b->a: guest a received every packet %s sent' % pa,
         a['rx_packets'] == da('tx_packets'),
         'guest a rx %d, %s tx %d' % (a['rx_packets'], pa,
                                      da('tx_packets'))),
        ('no packet reordered, duplicated or foreign',
         all(g[k] == 0 for g in (a, b)
             for k in ('reordered', 'duplicates', 'rx_other')),
         'a %s, b %s'
         % ([a[k] for k in ('reordered', 'duplicates', 'rx_other')],
            [b[k] for k in ('reordered', 'duplicates', 'rx_other')])),
        ('polling side %s: no kick, nothing staged' % pa,
         all(da('tx_q0_' + k) == 0
             for k in ('kicks', 'kicks_immediate', 'kicks_taken_over',
                       'staged'))
         and da('tx_q0_sent_immediate')
         == da('tx_packets') + da('ovs_tx_failure_drops'),
         ', '.join('%s %d' % (k, da('tx_q0_' + k))
                   for k in ('kicks', 'kicks_immediate', 'kicks_taken_over',
                             'staged', 'sent_immediate'))
         + ', tx_packets %d, ovs_tx_failure_drops %d'
         % (da('tx_packets'), da('ovs_tx_failure_drops'))),
    ]
    handled = db('tx_q0_sent_immediate') + db('tx_q0_staged')
    if kicks_mode == 'deferred':
        ok = (db('tx_q0_kicks_taken_over') > 0 and db('tx_q0_staged') == 0
              and db('tx_q0_kicks_taken_over')
              == db('tx_q0_kicks_delivered') + db('tx_q0_kicks_discarded')
              + ba.get('tx_q0_kicks_pending', 0)
              and db('tx_q0_kicks')
              == db('tx_q0_kicks_immediate') + db('tx_q0_kicks_delivered'))
    else:
        ok = db('tx_q0_staged') > 0
    ok = ok and handled == db('tx_packets') + db('tx_dropped')
    checks.append(
        ('interrupt side %s: %s kicks' % (pb, kicks_mode), ok,
         ', '.join('%s %d' % (k, db('tx_q0_' + k))
                   for k in ('kicks', 'kicks_immediate', 'kicks_taken_over',
                             'kicks_delivered', 'kicks_discarded', 'staged',
                             'sent_immediate'))))
    checks.append(
        ('nothing left staged or held',
         all(s.get(k, 0) == 0 for s in (aa, ba)
             for k in ('tx_q0_staged_now', 'tx_q0_kicks_pending')),
         'staged now %d/%d, kicks pending %d/%d'
         % (aa.get('tx_q0_staged_now', 0), ba.get('tx_q0_staged_now', 0),
            aa.get('tx_q0_kicks_pending', 0),
            ba.get('tx_q0_kicks_pending', 0))))
    report(checks)


def ovn_summary(tag, pa, pb):
    """One line of the numbers of phase 'tag' (see ovn_summary in
    tests/ovn-macros.at)."""
    a, b, aa, ba, da, db = ovn_phase(tag)
    before = (da('rx_packets') - db('tx_packets') - db('tx_dropped')
              - db('underlay_drops'))
    print('%s: a->b (%s to %s): sent %d, received %d, dropped %d (a\'s '
          'driver %d, OVS at %s %d, underlay socket %d, before the flows '
          '%d); b->a: sent %d, received %d, dropped %d (b\'s driver %d, OVS '
          'at %s %d, underlay socket %d); kicks: %s %d, %s %d (immediate '
          '%d, taken over %d, delivered %d), staged at %s %d; b woke %d '
          'times'
          % (tag, pa, pb, a['tx_packets'], b['rx_packets'],
             a['tx_dropped'] + db('tx_dropped') + db('underlay_drops')
             + before,
             a['tx_dropped'], pb, db('tx_dropped'), db('underlay_drops'),
             before, b['echoed'], a['rx_packets'],
             b['echo_dropped'] + da('tx_dropped') + da('underlay_drops'),
             b['echo_dropped'], pa, da('tx_dropped'), da('underlay_drops'),
             pa, da('tx_q0_kicks'), pb, db('tx_q0_kicks'),
             db('tx_q0_kicks_immediate'), db('tx_q0_kicks_taken_over'),
             db('tx_q0_kicks_delivered'), pb, db('tx_q0_staged'),
             b['wakeups']))


# Packets from the kernel side (run in the test's network namespace).

def tso_send(port, count, size):
    """Sends 'count' TCP/IPv4 packets of 'size' bytes of payload (see
    tcp_frame) out of network device 'port' as TSO packets: a virtio-net
    header asking for TCPv4 segmentation with MSS 1448 and a partial
    checksum."""
    s = vnet_socket(port)
    size = int(size)
    for i in range(int(count)):
        # struct virtio_net_hdr: NEEDS_CSUM, GSO_TCPV4, hdr_len, gso_size,
        # csum_start (the TCP header), csum_offset (its checksum field).
        vnet = struct.pack('<BBHHHH', 1, 1, 54, 1448, 34, 16)
        s.send(vnet + tcp_frame(i, size, 0) + bytes(size))


def csum_send(port, count, size):
    """Sends 'count' TCP/IPv4 packets of 'size' bytes of payload (see
    tcp_frame) out of network device 'port' with a virtio-net header asking
    for a partial checksum (NEEDS_CSUM, csum_start 34, csum_offset 16; the
    checksum field holds the pseudo-header sum), no segmentation."""
    s = vnet_socket(port)
    size = int(size)
    for i in range(int(count)):
        pseudo = fold(sum16(IP_SRC + IP_DST) + 6 + 20 + size)
        payload = bytes((i + j) & 0xff for j in range(size))
        vnet = struct.pack('<BBHHHH', 1, 0, 0, 0, 34, 16)
        s.send(vnet + tcp_frame(i, size, pseudo) + payload)


def capture_check(port, count, out, tag, judge, vnet=False):
    """Captures on network device 'port', for at most 30 s or until
    'count' frames were judged, and writes to file 'out' "TAG N good G bad
    B".  'judge(frame, pkttype)' returns None for a frame that does not
    count, else whether its checksums verify.  With 'vnet' each frame comes
    with its virtio-net header (PACKET_VNET_HDR) and one the sender handed
    over as CHECKSUM_PARTIAL (NEEDS_CSUM: the field holds the pseudo-header
    sum) is completed at csum_start/csum_offset first, as the kernel does
    before it delivers it.  Writes "ready" to OUT.ready once it listens."""
    import socket
    count = int(count)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    if vnet:
        # SOL_PACKET (263), PACKET_VNET_HDR (15).
        s.setsockopt(263, 15, 1)
    s.bind((port, 0))
    s.settimeout(1)
    open(out + '.ready', 'w').write('ready\n')
    n = good = bad = 0
    end = time.time() + 30
    while n < count and time.time() < end:
        try:
            f, addr = s.recvfrom(65536)
        except socket.timeout:
            continue
        if vnet:
            flags, _, _, _, start, offset = struct.unpack('<BBHHHH', f[:10])
            f = bytearray(f[10:])
            if flags & 1 and start + offset + 2 <= len(f):
                f[start + offset:start + offset + 2] = struct.pack(
                    '!H', csum(bytes(f[start:])))
            f = bytes(f)
        ok = judge(f, addr[2])
        if ok is None:
            continue
        n += 1
        good += ok
        bad += not ok
    open(out, 'w').write('%s %d good %d bad %d\n' % (tag, n, good, bad))


def tcp_ok(f, pkttype=None):
    """Whether TCP/IPv4 frame 'f' (IPv4 at byte 14) has right IPv4 and TCP
    checksums; None if it is not a TCP/IPv4 frame to port 80."""
    if len(f) < 54 or f[12:14] != b'\x08\x00' or f[23] != 6:
        return None
    iph = (f[14] & 15) * 4
    ip = f[14:14 + iph]
    tlen = struct.unpack('!H', ip[2:4])[0] - iph
    tcp = f[14 + iph:14 + iph + tlen]
    if len(tcp) < 20 or struct.unpack('!H', tcp[2:4])[0] != 80:
        return None
    pseudo = ip[12:20] + struct.pack('!HH', 6, tlen)
    return (fold(sum16(ip)) == 0xffff
            and fold(sum16(pseudo) + sum16(tcp)) == 0xffff)


def vxlan_check(port, count, out):
    """Captures on network device 'port', for at most 30 s or until 'count'
    VXLAN packets (UDP port 4789) came, and writes to file 'out' "vxlan N
    good G bad B": of the N, how many carry an inner TCP/IPv4 packet whose
    TCP and IPv4 checksums verify (G) or not (B).  Writes "ready" to
    OUT.ready once it listens."""
    def judge(f, pkttype):
        if len(f) < 50 or f[12:14] != b'\x08\x00' or f[23] != 17:
            return None
        udp = 14 + (f[14] & 15) * 4
        if struct.unpack('!H', f[udp + 2:udp + 4])[0] != 4789:
            return None
        ok = tcp_ok(f[udp + 16:])
        return bool(ok)
    capture_check(port, count, out, 'vxlan', judge)


def tcp_check(port, count, out):
    """Captures on network device 'port', for at most 30 s or until
    'count' TCP/IPv4 packets to port 80 came in (not the ones the device
    sent), and writes to file 'out' "tcp N good G bad B": of the N, how many
    have TCP and IPv4 checksums that verify (G) or not (B), as the kernel
    would deliver them (capture_check() with 'vnet').  Writes "ready" to
    OUT.ready once it listens."""
    # pkttype 4: PACKET_OUTGOING.
    capture_check(port, count, out, 'tcp',
                  lambda f, pkttype: None if pkttype == 4 else tcp_ok(f),
                  vnet=True)


def oneshot_server(path):
    """Listens on unix socket 'path', accepts one connection, closes it at
    once, removes 'path' and prints "closed"."""
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(1)
    c, _ = s.accept()
    c.close()
    s.close()
    os.unlink(path)
    print("closed")


# QEMU's machine protocol (the live migration tests,
# tests/system-migration.at).

QMP_BOUND_S = 120


def qmp(path, command, arguments='', key=''):
    """Runs QMP command 'command' ('arguments': a JSON object, "" for none)
    on the QEMU whose QMP socket is 'path' and prints its return value as
    JSON, or only the value at 'key' ("a.b.0": key b of object a, then its
    first element; strings bare, nothing when absent).  Exits with status 1,
    the reason on stderr, when QEMU answered an error, closed the connection
    or could not be reached, or the whole exchange (connect, greeting,
    qmp_capabilities, the command) took more than QMP_BOUND_S seconds of
    wall-clock time.  Events QEMU sends meanwhile are skipped."""
    import socket
    end = time.monotonic() + QMP_BOUND_S
    buf = b''

    def fail(why):
        sys.exit('qmp %s: %s' % (path, why))

    def left(what):
        """Seconds left of the bound; fails when none are."""
        t = end - time.monotonic()
        if t <= 0:
            fail('%s: no answer within %d s' % (what, QMP_BOUND_S))
        return t

    def receive(what):
        """The next message from QEMU, as an object."""
        nonlocal buf
        while b'\n' not in buf:
            s.settimeout(left(what))
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            except OSError as e:
                fail('%s: %s' % (what, e))
            if not data:
                fail('%s: connection closed' % what)
            buf += data
        line, buf = buf.split(b'\n', 1)
        try:
            return json.loads(line)
        except ValueError:
            fail('%s: not JSON: %r' % (what, line))

    def execute(cmd, args=None):
        """The return value of QMP command 'cmd' with arguments 'args'."""
        msg = {'execute': cmd}
        if args is not None:
            msg['arguments'] = args
        s.settimeout(left(cmd))
        try:
            s.sendall((json.dumps(msg) + '\n').encode())
        except OSError as e:
            fail('%s: %s' % (cmd, e))
        while True:
            r = receive(cmd)
            if 'return' in r:
                return r['return']
            if 'error' in r:
                fail('%s: %s' % (cmd, r['error'].get('desc', r['error'])))

    try:
        args = json.loads(arguments) if arguments else None
    except ValueError as e:
        fail('%s: arguments %s: %s' % (command, arguments, e))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(left('connect'))
    try:
        s.connect(path)
    except OSError as e:
        fail(e)
    receive('greeting')
    execute('qmp_capabilities')
    r = execute(command, args)
    for k in key.split('.') if key else ():
        if isinstance(r, list):
            r = r[int(k)] if int(k) < len(r) else None
        elif isinstance(r, dict):
            r = r.get(k)
        if r is None:
            return
    print(r if isinstance(r, (str, int)) else json.dumps(r))


# Processes of the test: races and stopped threads.

def kill_and_del(pid, port, delay_us):
    """Deletes 'port' (ovs-vsctl --timeout=OVS_CTL_TIMEOUT) and SIGKILLs
    'pid' 'delay_us' microseconds after starting; prints ovs-vsctl's exit
    status."""
    import signal
    import subprocess
    p = subprocess.Popen(['ovs-vsctl', '--timeout=%s'
                          % os.environ.get('OVS_CTL_TIMEOUT', '30'),
                          'del-port', port])
    time.sleep(int(delay_us) / 1e6)
    os.kill(int(pid), signal.SIGKILL)
    print(p.wait())


def break_at(pid, func, timeout, tid):
    """Sets a breakpoint (int3) at the entry of function 'func' of process
    'pid' for its thread 'tid' (see defects_break_at in
    tests/system-defects.at); prints "armed", "hit" when the thread stopped
    there, and "released" once the file bp.release exists and the thread
    runs on."""
    import ctypes
    import subprocess
    pid, tid = int(pid), int(tid)
    libc = libc_ptrace()
    # /proc/PID/exe itself, not its target: in a chroot (the Debian 13
    # root) the target is named as the host sees it.  The mapping is found
    # by inode.
    exe = '/proc/%d/exe' % pid
    ino = os.stat(exe).st_ino
    value = None
    for line in subprocess.run(['nm', exe], capture_output=True,
                               text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == func and f[1] in 'tT':
            value = int(f[0], 16)
    if value is None:
        sys.exit('no symbol %s in %s' % (func, exe))
    base = None
    for line in open('/proc/%d/maps' % pid):
        f = line.split()
        if len(f) >= 6 and int(f[4]) == ino and int(f[2], 16) == 0:
            base = int(f[0].split('-')[0], 16)
            break
    addr = base + value
    if libc.ptrace(SEIZE, tid, None, None):
        sys.exit('PTRACE_SEIZE: %s' % os.strerror(ctypes.get_errno()))
    libc.ptrace(INTERRUPT, tid, None, None)
    os.waitpid(tid, WALL)
    orig = libc.ptrace(PEEKTEXT, tid, ctypes.c_void_p(addr), None)
    libc.ptrace(POKETEXT, tid, ctypes.c_void_p(addr),
                ctypes.c_void_p((orig & ~0xff) | 0xcc))
    libc.ptrace(CONT, tid, None, None)
    print('armed', flush=True)
    regs = (ctypes.c_ulong * N_REGS)()
    while True:
        _, status = os.waitpid(tid, WALL)
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            sys.exit('process gone')
        libc.ptrace(GETREGS, tid, None, ctypes.byref(regs))
        if os.WSTOPSIG(status) == 5 and regs[RIP] == addr + 1:
            break
        # Any other stop: let the thread go on (with its signal, if any).
        sig = os.WSTOPSIG(status) if os.WSTOPSIG(status) not in (5, 19) \
            else 0
        libc.ptrace(CONT, tid, None, ctypes.c_void_p(sig))
    print('hit', flush=True)
    wait_file('bp.release')
    libc.ptrace(POKETEXT, tid, ctypes.c_void_p(addr), ctypes.c_void_p(orig))
    regs[RIP] = addr
    libc.ptrace(SETREGS, tid, None, ctypes.byref(regs))
    libc.ptrace(DETACH, tid, None, None)
    print('released', flush=True)


def freeze(tid, timeout):
    """Stops thread 'tid' while it waits in poll() or ppoll() (trying every
    10 ms for at most 'timeout' seconds), prints "frozen", and lets it go
    ("thawed") once the file freeze.thaw exists (see defects_freeze in
    tests/system-defects.at)."""
    import ctypes
    POLL, PPOLL = 7, 271
    tid, timeout = int(tid), int(timeout)
    libc = libc_ptrace()
    regs = (ctypes.c_ulong * N_REGS)()
    end = time.time() + timeout
    while True:
        if libc.ptrace(SEIZE, tid, None, None):
            sys.exit('PTRACE_SEIZE: %s' % os.strerror(ctypes.get_errno()))
        libc.ptrace(INTERRUPT, tid, None, None)
        os.waitpid(tid, WALL)
        libc.ptrace(GETREGS, tid, None, ctypes.byref(regs))
        if regs[ORIG_RAX] in (POLL, PPOLL):
            break
        libc.ptrace(DETACH, tid, None, None)
        if time.time() > end:
            sys.exit('the main thread was never found in poll()')
        time.sleep(0.01)
    print('frozen', flush=True)
    wait_file('freeze.thaw')
    libc.ptrace(DETACH, tid, None, None)
    print('thawed', flush=True)


COMMANDS = {f.__name__.replace('_', '-'): f for f in (
    log_problems, json_field, json_keys, stats_same, txp_check, txp_summary,
    txp_fewer_kicks, rel_check, rel_restart_check, ovn_move_times,
    ovn_check, ovn_summary,
    tso_send, csum_send, vxlan_check, tcp_check, oneshot_server, qmp,
    kill_and_del, break_at, freeze)}


if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit('usage: ovs_vhost_checks.py COMMAND ARG...; COMMAND: %s'
                 % ' '.join(sorted(COMMANDS)))
    COMMANDS[sys.argv[1]](*sys.argv[2:])
