#!/usr/bin/env python3
"""Prints the import cycles between the Java packages under the given source roots (exit 1 if any).

A package depends on another when one of its files imports a class of it or names it fully qualified
(io.scythe.x.Y). Usage: tools/package-cycles.py txn/src/main/java [more roots...]"""
import os, re, sys

def packages(roots):
    deps, known = {}, set()
    for root in roots:
        for d, _, files in os.walk(root):
            for f in files:
                if not f.endswith('.java'):
                    continue
                text = open(os.path.join(d, f), encoding='utf-8').read()
                m = re.search(r'^package\s+([\w.]+);', text, re.M)
                if not m:
                    continue
                pkg = m.group(1)
                known.add(pkg)
                body = re.sub(r'//[^\n]*|/\*.*?\*/', '', text, flags=re.S)  # comments and javadoc don't count
                for ref in re.findall(r'\b(io\.scythe(?:\.[a-z_][\w]*)+)\.[A-Z]', body):
                    deps.setdefault(pkg, set()).add(ref)
    return {p: {q for q in deps.get(p, ()) if q in known and q != p} for p in known}

def cycles(graph):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out

if __name__ == '__main__':
    graph = packages(sys.argv[1:] or ['txn/src/main/java'])
    found = cycles(graph)
    for comp in found:
        print('cycle:', ' <-> '.join(comp))
        for p in comp:
            print('  ', p, '->', ', '.join(sorted(q for q in graph[p] if q in comp)))
    print(f'{len(graph)} packages, {len(found)} cycles')
    sys.exit(1 if found else 0)
