#!/usr/bin/env python3
"""How the recovery module's two test forks (pom.xml, execution two-forks) split its classes, replayed on a CI log's
class times: surefire hands each class, in run order, to whichever fork is free first. Prints each order's fork end
times. Usage: tools/surefire-forks.py CI_LOG [Class=seconds ...] (the latter override a class's time: what-ifs)."""
import re
import sys

log = open(sys.argv[1]).read()
section = log[log.index('(two-forks) @ scythe-recovery'):]
# With the reactor's two threads (.mvn/maven.config) other modules' lines interleave with recovery's, so the section
# is not cut at the next 'Results:' (perhaps sim's) but at recovery's own results line for this execution's classes
# (surefire prints "Tests run: N, ..." without " -- in" once its forks are done); only io.scythe.cluster classes count.
end = re.search(r'\n\[\w+\] Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+\n', section)
section = section[:end.start()] if end else section[:section.index('Reactor Summary')]
times = {m.group(2): float(m.group(1))
         for m in re.finditer(r'Time elapsed: ([0-9.]+) s -- in io\.scythe\.cluster\.(\S+)', section)}
for arg in sys.argv[2:]:
    name, seconds = arg.split('=')
    times[name] = float(seconds)


def replay(order):
    forks = [0.0, 0.0]
    for c in order:
        i = forks.index(min(forks))
        forks[i] += times[c]
    return forks


names = sorted(times)
print('classes', len(names), 'sum', round(sum(times.values()), 1), 's')
for label, order in [('alphabetical', names), ('reversealphabetical', names[::-1]),
                     ('longest first', sorted(names, key=lambda c: -times[c]))]:
    forks = replay(order)
    print(f'{label}: forks end at {round(forks[0])} and {round(forks[1])} s')
