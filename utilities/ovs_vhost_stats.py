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

"""The one parser of "ovs-appctl netdev-vhost/stats PORT".

That command prints every counter of a port, one "  name: value" line each,
in name order (lib/netdev-vhost-stats.c, netdev_vhost_stats_format()), or,
asked with "ovs-appctl --format json" where the OVS build has JSON output
(3.3+), one JSON object of name: integer members.  parse() reads both;
read() asks for JSON and falls back to text.  The test suite and
utilities/ovs-vhost-bench parse it with these functions only:
tests/ovs_vhost_checks.py imports them, and the shell functions of
tests/netdev-vhost-macros.at (vhost_stats, custom_stat, vhost_val,
vhost_delta) run this file as a program:

    python3 ovs_vhost_stats.py [--default=N] [--since=BEFORE] [--sum]
                               [--names] FILE NAME...

reads a saved netdev-vhost/stats output from FILE ("-": standard input;
"appctl:PORT": runs ovs-appctl netdev-vhost/stats PORT now, read())
and prints the value of each counter NAME, one a line, in the order given.
A NAME with shell wildcards (fnmatch, e.g. "tx_q*_enabled") stands for
every counter it matches, in name order.  An absent counter prints N with
--default=N and nothing without it.  --since=BEFORE prints instead how much
each counter grew from the saved output BEFORE to FILE (delta(): absent
counts as 0).  --sum prints one line, the sum of the values (absent
counters count as N, or 0).  --names prints "NAME VALUE" lines.  Exit
status 0, or 2 for a usage error or a file that cannot be read.
"""

import fnmatch
import json
import subprocess
import sys


def parse(text):
    """Returns {name: int} of the counters in 'text' (the command's output,
    text or JSON).  Text: lines that are not "name: non-negative integer"
    are left out.  JSON: the members whose value is a non-negative integer;
    a text answer wrapped by an OVS whose build of ours has no JSON output
    ({"reply-format": "plain", "reply": TEXT}) is parsed as text.  "name:
    value" lines after the JSON object (a saved answer with counters of the
    test's own appended, as ovn_snap does) are parsed as text and added."""
    text = text.lstrip()
    if text.startswith('{'):
        try:
            obj, end = json.JSONDecoder().raw_decode(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            if obj.get('reply-format') == 'plain':
                counters = parse(obj.get('reply', ''))
            else:
                counters = {k: v for k, v in obj.items()
                            if isinstance(v, int) and not isinstance(v, bool)
                            and v >= 0}
            counters.update(parse(text[end:]))
            return counters
    counters = {}
    for line in text.splitlines():
        name, sep, value = line.strip().partition(': ')
        if sep and value.isdigit():
            counters[name] = int(value)
    return counters


def load(path):
    """parse() of the file at 'path' (a saved netdev-vhost/stats output),
    or read() of port PORT for a 'path' "appctl:PORT"."""
    if path.startswith('appctl:'):
        return read(appctl_run, path[len('appctl:'):])
    with open(path) as f:
        return parse(f.read())


# Whether ovs-appctl took "--format json": None until first asked.
_json_ok = None


def read(run, port):
    """{name: int} of netdev-vhost/stats of 'port' now: asked as JSON
    ("--format json") unless an earlier call found that ovs-appctl has no
    such option (OVS before 3.3), then as text.  'run'(*args) runs
    ovs-appctl with 'args' and returns its standard output; it raises an
    exception that quotes ovs-appctl's error when the command fails."""
    global _json_ok
    if _json_ok is not False:
        try:
            counters = parse(run('--format', 'json', 'netdev-vhost/stats',
                                 port))
            _json_ok = True
            return counters
        except Exception as e:
            # OVS 3.1's ovs-appctl: "unrecognized option '--format'".
            if _json_ok or 'format' not in str(e):
                raise
            _json_ok = False
    return parse(run('netdev-vhost/stats', port))


def appctl_run(*args):
    """Runs "ovs-appctl ARGS" (the environment says which daemon, e.g.
    OVS_RUNDIR) and returns its output; raises OSError if it fails."""
    p = subprocess.run(('ovs-appctl',) + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode:
        raise OSError('ovs-appctl %s: %s' % (' '.join(args),
                                             p.stderr.strip()))
    return p.stdout


def delta(before, after, name):
    """How much counter 'name' grew from dict 'before' to dict 'after'
    (absent counters count as 0)."""
    return after.get(name, 0) - before.get(name, 0)


def select(counters, names, default=None, before=None):
    """[(name, value)] of 'names' in 'counters' ({name: int}, from parse()),
    in the order of 'names'.  A name with shell wildcards (fnmatch) stands
    for every counter it matches, in name order.  An absent counter has
    value 'default', or is left out when 'default' is None.  With 'before'
    (a dict like 'counters') the value is delta(before, counters, name)."""
    found = []
    for name in names:
        if any(c in name for c in '*?['):
            found += [k for k in sorted(set(counters) | set(before or {}))
                      if fnmatch.fnmatchcase(k, name)]
        elif (name in counters or default is not None
              or (before is not None and name in before)):
            found.append(name)
    if before is not None:
        return [(k, delta(before, counters, k)) for k in found]
    return [(k, counters.get(k, default)) for k in found]


def main(argv):
    """The command line described at the top of this file; 'argv' without
    the program name.  Returns the exit status."""
    default, before, total, names = None, None, False, False
    try:
        while argv and argv[0].startswith('--'):
            opt, _, value = argv.pop(0).partition('=')
            if opt == '--default':
                default = int(value)
            elif opt == '--since':
                before = load(value)
            elif opt == '--sum':
                total = True
            elif opt == '--names':
                names = True
            else:
                raise ValueError('unknown option %s' % opt)
        if len(argv) < 2:
            raise ValueError('usage: ovs_vhost_stats.py [--default=N] '
                             '[--since=BEFORE] [--sum] [--names] '
                             'FILE NAME...')
        counters = parse(sys.stdin.read()) if argv[0] == '-' else load(argv[0])
    except (OSError, ValueError) as e:
        sys.stderr.write('ovs_vhost_stats.py: %s\n' % e)
        return 2
    if total:
        values = [('sum', sum(v for _, v in select(
            counters, argv[1:], default or 0, before)))]
    else:
        values = select(counters, argv[1:], default, before)
    for name, value in values:
        print('%s %d' % (name, value) if names else value)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
