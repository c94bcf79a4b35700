#!/usr/bin/env bash
# cli_test.sh STEP SGCAP FIXTURES OUT: one end-to-end check of the `sgcap`
# command (see cli.cmake for the list). FIXTURES is tests/golden; OUT a
# scratch directory, emptied first. Exit 0 pass, 1 fail, 77 skip.
set -u
step=$1 sgcap=$2 fixtures=$3 out=$4
rm -rf "$out" && mkdir -p "$out" || exit 1
cd "$out" || exit 1

fail() { echo "FAIL: $*" >&2; exit 1; }

# A copy of fixture $1 as bundle $2, its graph.json passed through sed $3.
craft() {
    cp -r "$fixtures/$1.sgraph" "$2" && sed -i "$3" "$2/graph.json" || fail "crafting $2"
}

# Output $1 must show no terminal control: no C0 byte but newline (and the
# tab some outputs align with), no DEL, no C1 control, no bidi override.
no_control() {
    if tr -d '\n\t' <"$1" | LC_ALL=C grep -q '[[:cntrl:]]'; then
        fail "$1 has raw control characters: $(tr -d '\n\t' <"$1" | LC_ALL=C grep -o '.[[:cntrl:]].' | od -c | head -3)"
    fi
    if LC_ALL=C grep -q $'\xc2[\x80-\x9f]\|\xe2\x80[\xaa-\xae]\|\xe2\x81[\xa6-\xa9]' "$1"; then
        fail "$1 has a raw C1 or bidirectional control"
    fi
}

step_escape() {
    # the attack of issue 16: a stream label that erases the race line on a
    # terminal; OSC, BEL, a forged newline, C1 CSI and a bidi override elsewhere
    craft bug_missing_wait hostile.sgraph '
        s/"label": "s0"/"label": "s0\\u001b[2K\\rno hazards"/
        s/"label": "a"/"label": "a\\u001b]0;pwned\\u0007\\nforged line"/
        s/"label": "e0"/"label": "e0\\u009b31m\\u202eevil"/
        s/"program": "bug_missing_wait"/"program": "prog\\u001b[31m"/
        s/"name": "_Z9k_producePjPKjm"/"name": "k\\u001b[1A\\u0008produce"/'
    "$sgcap" inspect hostile.sgraph >inspect.txt 2>inspect.err || fail "inspect exited $?"
    "$sgcap" inspect --code hostile.sgraph >code.txt 2>code.err
    # the renamed kernel is in no code: its race is possible, --strict fails on it
    "$sgcap" check --strict hostile.sgraph >check.txt 2>check.err
    [ $? -eq 1 ] || fail "check --strict should find the race (exit 1)"
    "$sgcap" rewrite hostile.sgraph -o rewritten.sgraph --report - >report.txt 2>report.err ||
        fail "rewrite exited $?: $(cat report.err)"
    "$sgcap" inspect rewritten.sgraph >inspect2.txt 2>&1 || fail "inspect of the rewrite failed"
    "$sgcap" dot hostile.sgraph >graph.dot 2>dot.err || fail "dot exited $?"
    for f in inspect.txt inspect.err code.txt code.err check.txt check.err report.txt report.err \
             inspect2.txt graph.dot dot.err; do
        no_control "$f"
    done
    # the strings are still shown, as visible escapes
    grep -qF 's0\x1b[2K\rno hazards' inspect.txt || fail "inspect does not show the stream label"
    grep -qF 'a\x1b]0;pwned\x07\nforged line' inspect.txt || fail "inspect does not show the buffer"
    grep -qF 'e0\u009b31m\u202eevil' inspect.txt || fail "inspect does not show the event"
    grep -qF 'prog\x1b[31m' inspect.txt || fail "inspect does not show the program"
    grep -qF 'race on a\x1b]0;pwned\x07\nforged line' check.txt || fail "check: $(cat check.txt)"
    grep -qF 's0\x1b[2K\rno hazards)' check.txt || fail "check does not name the stream"
    grep -qF 'k\x1b[1A\x08produce' check.txt || fail "check does not name the kernel"
    grep -q 'hazard' check.txt || fail "check summary missing"
    grep -qF 'e0\u009b31m\u202eevil' report.txt || fail "the report does not name the event"
    grep -qF 'label="s0\\x1b[2K\\rno hazards"' graph.dot || fail "dot lane label"
    # a reader diagnostic quoting a hostile key is escaped too
    craft fork_join badtype.sgraph '0,/"type": "kernel"/s//"type": "k\\u001b[2K"/'
    "$sgcap" inspect badtype.sgraph >badtype.out 2>badtype.err && fail "inspect accepted a bad type"
    no_control badtype.err
    grep -qF '\x1b[2K' badtype.err || fail "the diagnostic does not show the bad type: $(cat badtype.err)"
}

step_write_errors() {
    [ -w /dev/full ] || { echo "SKIP: no /dev/full"; exit 77; }
    local b="$fixtures/fork_join.sgraph" hz="$fixtures/bug_missing_wait.sgraph"
    # each command: fine on /dev/null, exit 2 with a message on a full disk
    while read -r want args; do
        # shellcheck disable=SC2086
        "$sgcap" $args >/dev/null 2>ok.err
        rc=$?
        [ "$rc" -eq "$want" ] || fail "sgcap $args >/dev/null exited $rc, not $want: $(cat ok.err)"
        # shellcheck disable=SC2086
        "$sgcap" $args >/dev/full 2>full.err
        rc=$?
        [ "$rc" -eq 2 ] || fail "sgcap $args >/dev/full exited $rc, not 2"
        grep -q 'writing the output (stdout) failed' full.err || fail "sgcap $args: $(cat full.err)"
    done <<LIST
0 inspect $b
0 inspect --json $b
0 inspect --code $b
0 check $b
1 check $hz
0 check --json $b
0 dot $b
0 --help
0 --version
0 inspect --help
LIST
}

step_dot_format() {
    command -v dot >/dev/null || { echo "SKIP: no Graphviz"; exit 77; }
    local b="$fixtures/fork_join.sgraph"
    "$sgcap" dot "$b" -o upper.SVG 2>err.txt || fail "-o upper.SVG: $(cat err.txt)"
    head -c 300 upper.SVG | grep -q '<svg\|<?xml' || fail "upper.SVG is not SVG"
    "$sgcap" dot "$b" -o pic.jpg 2>err.txt || fail "-o pic.jpg: $(cat err.txt)"
    [ "$(head -c 3 pic.jpg | od -An -tx1 | tr -d ' ')" = ffd8ff ] || fail "pic.jpg is not a JPEG"
    "$sgcap" dot "$b" -o pic.Png 2>err.txt || fail "-o pic.Png: $(cat err.txt)"
    [ "$(head -c 4 pic.Png | od -An -tx1 | tr -d ' ')" = 89504e47 ] || fail "pic.Png is not a PNG"
    for name in plain graph.dot graph.GV; do
        "$sgcap" dot "$b" -o $name 2>err.txt || fail "-o $name: $(cat err.txt)"
        head -1 $name | grep -q '^digraph sgcap {' || fail "$name is not DOT text"
    done
    # a format Graphviz lacks: refused with its own words, nothing written
    "$sgcap" dot "$b" -o pic.nosuchformat 2>err.txt && fail "-o pic.nosuchformat succeeded"
    grep -q 'Graphviz.*nosuchformat.*not recognized' err.txt || fail "unclear: $(cat err.txt)"
    # a name that cannot be a format
    "$sgcap" dot "$b" -o 'pic.a b' 2>err.txt && fail "-o 'pic.a b' succeeded"
    grep -q 'cannot tell a format' err.txt || fail "unclear: $(cat err.txt)"
    ls | grep -q 'nosuchformat\|pic.a b\|tmp' && fail "left behind: $(ls)"
    # a target that is not a regular file is written, not replaced; a link
    # is followed
    mkfifo pipe.dot || fail "mkfifo"
    cat pipe.dot >from_pipe.txt &
    "$sgcap" dot "$b" -o pipe.dot 2>err.txt || fail "-o FIFO: $(cat err.txt)"
    wait
    [ -p pipe.dot ] || fail "the FIFO was replaced by a file"
    head -1 from_pipe.txt | grep -q '^digraph sgcap {' || fail "nothing came through the FIFO"
    echo old >real.svg && ln -s real.svg link.svg
    "$sgcap" dot "$b" -o link.svg 2>err.txt || fail "-o link: $(cat err.txt)"
    [ -L link.svg ] || fail "the link was replaced by a file"
    grep -q '<svg' real.svg || fail "the file the link names was not written"
    return 0
}

step_dot_long_name() {
    command -v dot >/dev/null || { echo "SKIP: no Graphviz"; exit 77; }
    # a 64 KiB kernel name: within the format's limits, past Graphviz's
    # 16 KiB for a quoted string
    local long
    long="_Z65000$(head -c 65000 /dev/zero | tr '\0' k)v"
    craft fork_join long.sgraph "s/_Z8k_squarePfm/$long/"
    "$sgcap" dot long.sgraph -o long.svg 2>err.txt || fail "dot of a 64 KiB name: $(cat err.txt)"
    [ -s long.svg ] || fail "no SVG"
    "$sgcap" dot long.sgraph >long.dot || fail "DOT of a 64 KiB name"
    awk '{ n = split($0, q, "\""); for (i = 2; i <= n; i += 2) if (length(q[i]) > 2048) exit 1 }' \
        long.dot || fail "a string in the DOT is longer than 2 KiB"
    # a Graphviz failure is reported with Graphviz's words, naming no file of ours
    mkdir -p fakebin
    printf '#!/bin/sh\necho "Error: <stdin>: syntax error in line 3" >&2\nexit 1\n' >fakebin/dot
    chmod +x fakebin/dot
    PATH="$out/fakebin:$PATH" "$sgcap" dot long.sgraph -o fail.svg 2>err.txt &&
        fail "a failing Graphviz was not reported"
    grep -q 'Graphviz (dot -Tsvg) failed to render fail.svg (exit status 1): Error: <stdin>: syntax error in line 3' err.txt ||
        fail "unclear: $(cat err.txt)"
    grep -q 'tmp' err.txt && fail "the message names a temporary file: $(cat err.txt)"
    ls | grep -q 'fail.svg\|tmp' && fail "left behind: $(ls)"
    return 0
}

step_run_dashdash() {
    "$sgcap" run --out -- /bin/true 2>err.txt && fail "run --out -- was accepted"
    grep -q -- '--out needs a value' err.txt || fail "unclear: $(cat err.txt)"
    [ -e -- ] && fail "a directory named -- appeared"
    "$sgcap" run --max-bundles -- /bin/true 2>err.txt && fail "run --max-bundles -- was accepted"
    grep -q -- '--max-bundles needs a value' err.txt || fail "unclear: $(cat err.txt)"
    # the ordinary form still works
    "$sgcap" run --out "$out/bundles" -- /bin/true 2>err.txt || fail "run --out DIR: $(cat err.txt)"
    grep -q '/bin/true exited with 0' err.txt || fail "run: $(cat err.txt)"
}

# A capture of about $1 nodes shaped like a training step (deterministic):
# a main stream s0 running a repeated layer of 5 kernels, forks to s1 and
# s2 that run chains and join back, a copy stream s3 feeding s0.
big_bundle() {
    mkdir -p "$2" && awk -v n="$1" '
    function node(s, type, extra) {
        printf "%s{\"id\": %d, \"type\": \"%s\", \"stream\": %d, \"seq\": %d%s}",
            id ? ",\n" : "", id, type, s, id, extra >nodes
        if (last[s] != "") edge(last[s], id, "\"stream\"")
        last[s] = id
        return id++
    }
    function edge(a, b, kind) {
        printf "%s{\"id\": %d, \"from\": %d, \"to\": %d, \"kind\": %s}", eid ? ",\n" : "",
            eid, a, b, kind >edges
        eid++
    }
    function kernel(s, name) {
        node(s, "kernel", ", \"kernel\": {\"name\": \"" name "\", \"grid\": [1024, 1, 1], \"block\": [256, 1, 1]}")
    }
    function sync(a, b,    r, w) {
        r = node(a, "event_record", ", \"event\": " a)
        w = node(b, "event_wait", ", \"event\": " a)
        edge(r, w, "\"event\", \"event\": " a)
    }
    BEGIN {
        srand(16); id = 0; eid = 0
        nodes = ENVIRON["TMPD"] "/nodes"; edges = ENVIRON["TMPD"] "/edges"
        split("_Z13layernorm_fwdPf _Z9gemm_tilePf _Z13bias_gelu_fwdPf _Z9gemm_tilePf _Z12residual_addPf", layer, " ")
        split("_Z17attention_partialPf _Z11softmax_rowPf", side, " ")
        while (id < n) {
            r = rand()
            if (r < 0.6) { k = 5 * (1 + int(rand() * 4)); for (i = 0; i < k; i++) kernel(0, layer[i % 5 + 1]) }
            else if (r < 0.8) {
                sync(0, 1); sync(0, 2)
                for (t = 1; t <= 2; t++) { k = 2 + int(rand() * 6); for (i = 0; i < k; i++) kernel(t, side[i % 2 + 1]) }
                sync(1, 0); sync(2, 0)
            } else { node(3, "memcpy", ", \"memcpy\": {\"width\": 1048576, \"kind\": \"h2d\"}"); sync(3, 0) }
        }
    }' && {
        printf '{"format": "sgcap-bundle", "version": 1, "capture": {"program": "big"},\n'
        printf '"streams": [{"id": 0, "label": "s0"}, {"id": 1, "label": "s1"}, {"id": 2, "label": "s2"}, {"id": 3, "label": "s3"}],\n'
        printf '"events": [{"id": 0, "label": "e0"}, {"id": 1, "label": "e1"}, {"id": 2, "label": "e2"}, {"id": 3, "label": "e3"}],\n'
        printf '"nodes": [\n'; cat "$TMPD/nodes"; printf '],\n"edges": [\n'; cat "$TMPD/edges"; printf ']}\n'
    } >"$2/graph.json"
}

# Boxes (node statements) of a DOT file.
boxes() { grep -cE '^ +[nf][0-9]+ \[label=' "$1"; }

step_dot_fold() {
    export TMPD="$out"
    big_bundle 20000 big.sgraph || fail "making the big bundle"
    big_bundle 1000 mid.sgraph || fail "making the mid bundle"
    "$sgcap" inspect big.sgraph | grep -q '^nodes: *200[0-9][0-9] ' || fail "the big bundle: $("$sgcap" inspect big.sgraph 2>&1 | head -5)"
    # folded by default, and said so on stderr and in the title
    "$sgcap" dot big.sgraph >big.dot 2>big.err || fail "dot: $(cat big.err)"
    n=$(boxes big.dot)
    [ "$n" -le 300 ] && [ "$n" -ge 50 ] || fail "20000 nodes drawn as $n boxes (want 50..300)"
    grep -qE '^sgcap dot: 200[0-9]{2} nodes drawn as [0-9]+ boxes.*--max-nodes 0 draws every node' big.err ||
        fail "no folding summary: $(cat big.err)"
    grep -q 'label="big\\n200[0-9][0-9] nodes drawn as' big.dot || fail "the title does not say how it was folded"
    grep -q 'rank=same' big.dot || fail "no bands in a 20000-node drawing"
    # --max-nodes: the budget, 0 for every node
    "$sgcap" dot --max-nodes 100 big.sgraph >small.dot 2>/dev/null || fail "--max-nodes 100"
    n=$(boxes small.dot)
    [ "$n" -le 100 ] || fail "--max-nodes 100 drew $n boxes"
    "$sgcap" dot --max-nodes 0 mid.sgraph >all.dot 2>all.err || fail "--max-nodes 0"
    [ "$(boxes all.dot)" -eq "$(grep -o '"id": [0-9]*, "type"' mid.sgraph/graph.json | wc -l)" ] ||
        fail "--max-nodes 0 did not draw every node"
    [ -s all.err ] && fail "an unfolded drawing reported folding: $(cat all.err)"
    # a mid-size graph keeps detail: repeats of the layer and of one kernel
    "$sgcap" dot mid.sgraph >mid.dot 2>/dev/null || fail "dot mid"
    grep -q 'label="[0-9]* x \[\\nlayernorm_fwd' mid.dot || fail "no repeated layer box"
    # small graphs are drawn as before
    "$sgcap" dot "$fixtures/fork_join.sgraph" >fj.dot 2>fj.err || fail "dot fork_join"
    [ -s fj.err ] && fail "a small graph reported folding: $(cat fj.err)"
    [ "$(boxes fj.dot)" -eq 5 ] || fail "fork_join: $(boxes fj.dot) boxes"
    if command -v dot >/dev/null; then
        "$sgcap" dot big.sgraph -o big.svg 2>big.err || fail "rendering 20000 nodes: $(cat big.err)"
        [ -s big.svg ] || fail "no SVG"
    fi
    return 0
}

# Is process $1 running (a zombie waiting for its new parent to reap it is not)?
running() {
    [ -r "/proc/$1/stat" ] && ! sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^Z'
}

step_dot_signal() {
    # a Graphviz that never finishes: sgcap is interrupted while it runs
    mkdir -p fakebin
    printf '#!/bin/sh\necho $$ >"%s/fake.pid"\nexec sleep 60\n' "$out" >fakebin/dot
    chmod +x fakebin/dot
    for sig in TERM HUP KILL; do
        rm -f fake.pid
        PATH="$out/fakebin:$PATH" "$sgcap" dot "$fixtures/fork_join.sgraph" -o pic.svg 2>err.txt &
        local pid=$! i
        for i in $(seq 100); do [ -s fake.pid ] && break; sleep 0.1; done
        [ -s fake.pid ] || fail "the fake Graphviz never started: $(cat err.txt)"
        local child
        child=$(cat fake.pid)
        kill -$sig $pid
        wait $pid
        local rc=$?
        [ $rc -gt 128 ] || fail "sgcap did not die of SIG$sig (exit $rc)"
        for i in $(seq 50); do running "$child" || break; sleep 0.1; done
        if running "$child"; then
            kill "$child"
            fail "Graphviz outlived sgcap killed by SIG$sig"
        fi
        ls | grep -v '^fakebin$\|^err.txt$\|^fake.pid$' | grep -q . && fail "SIG$sig left behind: $(ls)"
    done
    return 0
}

step_nccl() {
    # the NCCL fixture (rank 1 of two, device 1; docs/NCCL.md): its NCCL
    # kernel and its comm stream are labelled, no other; check is clean;
    # replay says in-process only, with the reason, before needing a GPU
    local b=$fixtures/nccl_two_ranks.sgraph
    "$sgcap" inspect "$b" >inspect.txt 2>&1 || fail "inspect exited $?"
    grep -q '^origin:  rank 1, device 1$' inspect.txt || fail "inspect: no origin: $(cat inspect.txt)"
    grep -q '^  s1 .*\[comm: NCCL kernels only\]$' inspect.txt || fail "inspect: s1 not a comm stream"
    [ "$(grep -c 'comm:' inspect.txt)" = 1 ] || fail "inspect: another stream labelled comm"
    grep -q '^  ncclDevKernel_AllReduce_Sum_f32_RING_LL .*\[NCCL\]$' inspect.txt ||
        fail "inspect: the NCCL kernel is not labelled"
    [ "$(grep -c '\[NCCL\]' inspect.txt)" = 1 ] || fail "inspect: another kernel labelled NCCL"
    "$sgcap" inspect --json "$b" >inspect.json || fail "inspect --json exited $?"
    python3 - inspect.json <<'EOF2' || fail "inspect --json: $(cat inspect.json)"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["rank"] == 1 and j["device_ordinal"] == 1, j
assert [s.get("comm") for s in j["streams"]] == [None, "NCCL"], j["streams"]
lib = {k["short_name"]: k.get("library") for k in j["kernels"]}
assert lib == {"produce": None, "ncclDevKernel_AllReduce_Sum_f32_RING_LL": "NCCL",
               "scale": None, "consume": None}, lib
EOF2
    "$sgcap" dot "$b" >graph.dot 2>dot.err || fail "dot exited $?"
    grep -q 'label="s1 (comm: NCCL)"' graph.dot || fail "dot: the comm lane is not labelled"
    grep -q 'label="s0"' graph.dot || fail "dot: the compute lane is not plain s0"
    [ "$(grep -c 'NCCL kernel' graph.dot)" = 1 ] || fail "dot: NCCL kernel label count"
    "$sgcap" check "$b" >check.txt 2>&1 || fail "check exited $?: $(cat check.txt)"
    "$sgcap" replay "$b" --validate >replay.txt 2>&1
    local rc=$?
    [ $rc -eq 1 ] || fail "replay exited $rc, not 1 (in-process only): $(cat replay.txt)"
    grep -q 'in-process only' replay.txt || fail "replay: $(cat replay.txt)"
    grep -q '^  n1 .*is an NCCL kernel: a communicator cannot be rebuilt offline' replay.txt ||
        fail "replay does not give the NCCL reason: $(cat replay.txt)"
    return 0
}

"step_$step"
echo "ok: $step"
