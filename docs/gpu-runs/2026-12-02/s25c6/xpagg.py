import sys, collections, statistics as st
d = collections.defaultdict(lambda: collections.defaultdict(list))
sizes = set()
for l in open(sys.argv[1]):
    p = l.split()
    if not p or p[0] != 'xp': continue
    size, rep, name, cyc = int(p[1]), int(p[2]), p[3], int(p[4])
    d[name][size].append(cyc); sizes.add(size)
a, b = sorted(sizes)
k = b / a
rows = []
for name, v in d.items():
    if a not in v or b not in v: continue
    ma, mb = st.median(v[a]), st.median(v[b])
    rows.append((mb - k * ma, name, ma, mb))
rows.sort(reverse=True)
ta = sum(r[2] for r in rows if not r[1].startswith('bench') and r[1] != 'mgr:end')
tb = sum(r[3] for r in rows if not r[1].startswith('bench') and r[1] != 'mgr:end')
print("timed sections: small %.1fM large %.1fM cycles, ratio %.2f; excess over %.0fx: %.1fM" % (ta/1e6, tb/1e6, tb/ta, k, (tb-k*ta)/1e6))
for ex, name, ma, mb in rows:
    print("%-22s small %8.2fM large %9.2fM ratio %6.2f excess %7.2fM" % (name, ma/1e6, mb/1e6, mb/ma if ma else 0, ex/1e6))
