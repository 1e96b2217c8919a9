#!/usr/bin/env python3
"""How long `mvn -B verify` takes with the reactor's N threads (mvn -T N), replayed on a CI log's module
times (its Reactor Summary): Maven starts a module, in reactor order, once every module it depends on has finished and
one of the N threads is free. No slowdown from sharing the cores is modelled, so read the result as the schedule's
bound, not a measurement. Usage: tools/reactor-schedule.py CI_LOG [THREADS ...] (default 1 2 3)."""
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

root = Path(__file__).resolve().parent.parent
ns = {'m': 'http://maven.apache.org/POM/4.0.0'}
modules = [m.text for m in ET.parse(root / 'pom.xml').getroot().find('m:modules', ns)]
name_of, deps_of = {}, {}
for module in modules:
    pom = ET.parse(root / module / 'pom.xml').getroot()
    name_of[module] = pom.findtext('m:name', namespaces=ns)
    deps_of[module] = {d.findtext('m:artifactId', namespaces=ns) for d in pom.iterfind('m:dependencies/m:dependency', ns)}
artifact_of = {m: ET.parse(root / m / 'pom.xml').getroot().findtext('m:artifactId', namespaces=ns) for m in modules}
module_of = {a: m for m, a in artifact_of.items()}
deps = {m: {module_of[a] for a in deps_of[m] if a in module_of} for m in modules}

log = open(sys.argv[1]).read()
summary = log[log.rindex('Reactor Summary'):]
seconds = {}
for module in modules:
    found = re.search(re.escape(name_of[module]) + r' \.+ \w+ \[ *(?:(\d+):(\d+) min|([0-9.]+) s)\]', summary)
    if not found:
        sys.exit(f'no time for {name_of[module]} in the log\'s Reactor Summary')
    seconds[module] = int(found[1]) * 60 + int(found[2]) if found[1] else float(found[3])


def replay(threads):
    done, running, free_at, t = {}, {}, [0.0] * threads, 0.0
    waiting = list(modules)
    while waiting or running:
        ready = [m for m in waiting if all(d in done for d in deps[m])]
        slot = min(range(threads), key=lambda i: free_at[i])
        if ready and free_at[slot] <= t:
            m = ready[0]
            waiting.remove(m)
            running[m] = t + seconds[m]
            free_at[slot] = running[m]
            continue
        m = min(running, key=running.get)  # advance to the next module to end
        t = max(t, running.pop(m))
        done[m] = t
    return t, done


print('modules', len(modules), 'sum', round(sum(seconds.values())), 's')
for n in [int(a) for a in sys.argv[2:]] or [1, 2, 3]:
    total, done = replay(n)
    print(f'-T{n}: {int(total // 60)}:{total % 60:04.1f}', ' '.join(f'{m.split("/")[-1]}@{round(done[m])}' for m in modules))
