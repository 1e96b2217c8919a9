#!/usr/bin/env python3
"""How the recovery module's two test forks (pom.xml, execution two-forks) split its classes, replayed on a CI log's
class times: surefire hands each class, in run order, to whichever fork is free first. Prints each order's fork end
times. Usage: tools/surefire-forks.py CI_LOG [Class=seconds ...] (the latter override a class's time: what-ifs)."""
import re
from pathlib import Path
import sys

log = open(sys.argv[1]).read()
if '(two-forks) @ scythe-recovery' not in log:
    sys.exit('the log has no two-forks execution of scythe-recovery (did the build stop before it?)')
section = log[log.index('(two-forks) @ scythe-recovery'):]
# With the reactor's two threads (`mvn -T2`) other modules' lines, their 'Results:' and totals too, interleave
# with recovery's, so the section runs to the Reactor Summary and a class counts only if recovery's tests hold it.
section = section[:section.index('Reactor Summary')]
recovery_tests = Path(__file__).resolve().parent.parent / 'recovery/src/test/java/io/scythe/cluster'
times = {m.group(2): float(m.group(1))
         # A failed class's line has '<<< FAILURE! ' or '<<< ERROR! ' before '-- in': its time counts as well.
         for m in re.finditer(r'Time elapsed: ([0-9.]+) s (?:<<< (?:FAILURE|ERROR)! )?-- in io\.scythe\.cluster\.(\S+)',
                              section)
         if (recovery_tests / (m.group(2).split('$')[0] + '.java')).exists()}
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
