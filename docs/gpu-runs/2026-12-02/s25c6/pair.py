import sys, collections, statistics as st, re
pool = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sys.argv[1:]:
    t = collections.defaultdict(dict)
    for l in open(f):
        p = l.split()
        if not p or p[0] != 'raw': continue
        ph = ' '.join(p[1:-3]); t[ph].setdefault(int(p[-2]), {})[int(p[-3])] = float(p[-1])
    var = re.sub(r'\.\d+\.raw$', '', f.split('/')[-1])
    for ph, reps in t.items():
        rs = [v[max(v)] / v[min(v)] for v in reps.values() if len(v) == 2]
        sm = sorted(v[min(v)] for v in reps.values()); lg = sorted(v[max(v)] for v in reps.values())
        pool[var][ph] += rs
        print("%-28s %-16s paired-median %.2f  best %.2f  median small %.2f large %.1f ms" % (f.split('/')[-1], ph, st.median(rs), lg[0] / sm[0], st.median(sm), st.median(lg)))
for var, d in pool.items():
    for ph, rs in d.items():
        rs.sort(); n = len(rs)
        print("POOLED %-22s %-16s n=%d paired-median %.2f  (quartiles %.2f-%.2f)" % (var, ph, n, st.median(rs), rs[n // 4], rs[(3 * n) // 4]))
