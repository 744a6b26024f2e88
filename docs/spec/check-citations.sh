#!/usr/bin/env bash
# Lists every citation of the specification in crates/**/*.rs and checks that
# it resolves in docs/spec/: the file exists and every cited section number is
# a heading of that file ("## 3. ..." or "### 3.2 ...").
#
# Recognised forms (backticks, <code>…</code> and a line break between the
# file and its sections are allowed):
#   testbed-spec.md §3.2   `testbed-spec.md` §1–3  algorithms-spec.md §4/§6.6
#   spec/radio-spec.md §1.5   docs/spec/radio-spec.md §2   shared/spec/algorithms-spec.md
#   testbed-spec.md` §2, §5   algorithms-spec.md §4 and §6.6
#   `README.md` item 4     (a numbered item of docs/spec/README.md)
#   spec §0.3              (no file named: checked against algorithms-spec.md)
# Paths to the project's own notes (docs/algorithms.md, docs/decisions/*.md,
# docs/calibration.md) are not spec citations and are skipped.
#
# Usage: docs/spec/check-citations.sh [--quiet] [--forms] [--spec DIR] [ROOT]
#   ROOT     the repository (default: two levels above this script)
#   --spec   the folder the citations must resolve in (default ROOT/docs/spec)
#   --quiet  print only unresolved citations and the summary
#   --forms  also print each distinct citation form with its count
# Exit status: 0 when every citation resolves, 1 otherwise, 2 on bad usage.
set -euo pipefail

quiet=0 forms=0 spec="" root=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quiet) quiet=1 ;;
        --forms) forms=1 ;;
        --spec) [ $# -ge 2 ] || { echo "check-citations: --spec needs a folder" >&2; exit 2; }
                spec="$2"; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        -*) echo "check-citations: unknown option '$1' (expected --quiet, --forms, --spec DIR)" >&2; exit 2 ;;
        *) [ -z "$root" ] || { echo "check-citations: one ROOT only, got '$root' and '$1'" >&2; exit 2; }
           root="$1" ;;
    esac
    shift
done
[ -n "$root" ] || root="$(cd "$(dirname "$0")/../.." && pwd)"
[ -n "$spec" ] || spec="$root/docs/spec"
[ -d "$root/crates" ] || { echo "check-citations: no crates/ folder under '$root'" >&2; exit 2; }
[ -d "$spec" ] || { echo "check-citations: spec folder '$spec' does not exist" >&2; exit 2; }

# The headings of every spec file: "<file> <number>" per line; and the
# numbered items of README.md: "README.md item <n>".
index="$(mktemp)"
trap 'rm -f "$index"' EXIT
for f in "$spec"/*.md; do
    [ -e "$f" ] || continue
    LC_ALL=C awk -v name="$(basename "$f")" '
        /^#+[ ]/ { t = $2; sub(/\.$/, "", t); if (t ~ /^[0-9]+(\.[0-9]+)*$/) print name, t }
        name == "README.md" && /^[0-9]+\. / { n = $1; sub(/\.$/, "", n); print name, "item" n }
    ' "$f"
done >"$index"

find "$root/crates" -name '*.rs' -not -path '*/target/*' | LC_ALL=C sort |
LC_ALL=C awk -v index_file="$index" -v specdir="$spec" -v root="$root/" \
    -v quiet="$quiet" -v forms="$forms" '
function strip(s) {
    sub(/^[ \t]*(\/\/[\/!]?|\*)?[ \t]*/, "", s)
    return s
}
function has(file, sec) { return ((file " " sec) in heading) }
function report(path, ln, form, file, secs, ok, missing) {
    total++
    if (!ok) bad++
    if (forms) count[form]++
    if (!quiet || !ok)
        printf "%s:%d: %s -> %s%s %s\n", path, ln, form, file, (secs == "" ? "" : " " secs), \
            (ok ? "ok" : "UNRESOLVED (" missing ")")
}
# Checks one section list such as "§1–3, §5" against file; returns the
# missing parts, "" when all resolve.
function check_secs(file, list,    parts, n, i, p, lo, hi, a, b, k, miss) {
    miss = ""
    gsub(/§/, "", list)
    gsub(/[ ]*(,|\/|and)[ ]*/, ";", list)
    n = split(list, parts, ";")
    for (i = 1; i <= n; i++) {
        p = parts[i]
        if (p == "") continue
        if (index(p, "–") || index(p, "-")) {
            sub(/–/, "-", p)
            lo = p; sub(/-.*/, "", lo)
            hi = p; sub(/.*-/, "", hi)
            if (lo ~ /^[0-9]+$/ && hi ~ /^[0-9]+$/) {
                for (k = lo + 0; k <= hi + 0; k++)
                    if (!has(file, k "")) miss = miss " §" k
            } else {
                if (!has(file, lo)) miss = miss " §" lo
                if (!has(file, hi)) miss = miss " §" hi
            }
        } else if (!has(file, p)) miss = miss " §" p
    }
    return miss
}
BEGIN {
    while ((getline line < index_file) > 0) {
        split(line, f, " ")
        heading[f[1] " " f[2]] = 1
        exists[f[1]] = 1
    }
    SEC = "§[0-9]+(\\.[0-9]+)*((–|-)[0-9]+(\\.[0-9]+)*)?"
    LIST = "^(`|</code>)?[ ]*" SEC "([ ]*(,|\\/|and)[ ]*" SEC ")*"
    FILE = "(docs\\/spec\\/|shared\\/spec\\/|spec\\/)?(testbed|transport-tcp|algorithms|radio|calibration|architecture)-spec\\.md"
}
{
    path = $0
    rel = path; if (index(rel, root) == 1) rel = substr(rel, length(root) + 1)
    n = 0
    while ((getline l < path) > 0) lines[++n] = l
    close(path)
    for (i = 1; i <= n; i++) {
        cur = strip(lines[i])
        nxt = (i < n) ? strip(lines[i + 1]) : ""
        text = cur " " nxt
        limit = length(cur)
        off = 0
        # File citations.
        while (off < limit && match(substr(text, off + 1), FILE)) {
            start = off + RSTART
            end = start + RLENGTH
            off = end - 1
            if (start > limit) break
            before = (start > 1) ? substr(text, start - 1, 1) : ""
            if (before ~ /[A-Za-z0-9_.\/-]/) continue
            name = substr(text, start, RLENGTH)
            file = name; sub(/.*\//, "", file)
            rest = substr(text, end)
            secs = ""
            if (match(rest, LIST)) {
                secs = substr(rest, RSTART, RLENGTH)
                sub(/^(`|<\/code>)?[ ]*/, "", secs)
            }
            form = name (secs == "" ? "" : " " secs)
            if (!(file in exists)) { report(rel, i, form, specdir "/" file, secs, 0, "no such file"); continue }
            miss = (secs == "") ? "" : check_secs(file, secs)
            report(rel, i, form, specdir "/" file, secs, miss == "", "missing" miss)
        }
        # The spec README by item: "`README.md` item 4".
        if (match(cur, /(^|[^A-Za-z0-9_.\/-])`?README\.md`? item [0-9]+/)) {
            item = substr(cur, RSTART, RLENGTH); sub(/.* item /, "", item)
            report(rel, i, "README.md item " item, specdir "/README.md", "item " item, \
                has("README.md", "item" item), "no item " item)
        }
        # Sections cited with no file: "spec §4", "spec §4, §6.6".
        off = 0
        while (off < limit && match(substr(text, off + 1), /spec \(?§[0-9]/)) {
            start = off + RSTART
            off = start + RLENGTH - 1
            if (start > limit) break
            rest = substr(text, start + 5)
            sub(/^\(/, "", rest)
            if (!match(rest, LIST)) continue
            secs = substr(rest, RSTART, RLENGTH)
            miss = check_secs("algorithms-spec.md", secs)
            report(rel, i, "spec " secs, specdir "/algorithms-spec.md", secs, miss == "", "missing" miss)
        }
    }
    delete lines
}
END {
    if (forms) {
        print ""
        print "Citation forms (count, form):"
        for (k in count) printf "%5d  %s\n", count[k], k | "sort -rn"
        close("sort -rn")
    }
    printf "\n%d citations, %d unresolved (spec folder: %s)\n", total, bad, specdir
    exit (bad > 0)
}'
