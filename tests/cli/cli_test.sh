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
    "$sgcap" check hostile.sgraph >check.txt 2>check.err
    [ $? -eq 1 ] || fail "check should find the race (exit 1)"
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

"step_$step"
echo "ok: $step"
