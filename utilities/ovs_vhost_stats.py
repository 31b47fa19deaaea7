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
in name order (lib/netdev-vhost-stats.c, netdev_vhost_stats_format()).  The
test suite (tests/*.at, through the shell's txp_snap files) and
utilities/ovs-vhost-bench parse it with these functions only.
"""


def parse(text):
    """Returns {name: int} of the counters in 'text' (the command's output);
    lines that are not "name: non-negative integer" are left out."""
    counters = {}
    for line in text.splitlines():
        name, sep, value = line.strip().partition(': ')
        if sep and value.isdigit():
            counters[name] = int(value)
    return counters


def load(path):
    """parse() of the file at 'path' (a saved netdev-vhost/stats output)."""
    with open(path) as f:
        return parse(f.read())


def delta(before, after, name):
    """How much counter 'name' grew from dict 'before' to dict 'after'
    (absent counters count as 0)."""
    return after.get(name, 0) - before.get(name, 0)
