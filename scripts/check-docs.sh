#!/usr/bin/env bash
# Runs the code blocks of README.md and docs/*.md (not docs/notebook/), so
# that the documentation's examples keep working. The conventions are at the
# top of docs/README.md.
#
#   bash scripts/check-docs.sh [FILE.md ...]      # default: README.md docs/*.md
#   DOCS_BIN_DIR=DIR bash scripts/check-docs.sh   # binaries already built in DIR
#
# For each file, its ```sh and ```python blocks run in document order in one
# bash session (set -euo pipefail), each from the repository root, with a
# fresh scratch directory in $DOCS_TMP (outside the repository). When the
# file ends, or a block fails, the session's background jobs (servers,
# agents) get SIGTERM, then SIGKILL after 10 s. A failure names the file and
# the line of the block's opening fence; the other files still run, and the
# script exits non-zero at the end.
#
# `cargo run --release -q --bin NAME -- ARGS`, the only cargo command the
# blocks may use, runs $DOCS_BIN_DIR/NAME ARGS (exec'd, so `$!` of a command
# put in the background is the program's pid, as with cargo run). By default
# DOCS_BIN_DIR is ${CARGO_TARGET_DIR:-target}/release after one
# `cargo build --release --workspace --bins` (a no-op once the workspace is
# built): the binaries cargo run would build and exec, without cargo's
# up-to-date check on every command. DOCS_CARGO=literal runs cargo itself.
#
# Python blocks run as scripts with the Python of a virtual environment made
# on first use at ${CARGO_TARGET_DIR:-target}/docs-venv (grpcio and
# grpcio-tools from PyPI); its bin/ comes first on PATH in the sessions, so
# `python` in an sh block is that Python too.
#
# ```sh no-run blocks are not run (they are counted): only commands that need
# infrastructure CI lacks, so each line is a kubectl or docker command (with
# its continuation lines) or a comment. ```text blocks (output, grammar) are
# never run, and ```rust blocks are the doc tests of the guides crate
# (docs/Cargo.toml). A fence with any other info string is an error.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
source scripts/env.sh

target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
venv="$target_dir/docs-venv"
python_packages=(grpcio==1.84.0 grpcio-tools==1.84.0)

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  files=(README.md docs/*.md)
fi

run="$(mktemp -d "${TMPDIR:-/tmp}/check-docs-run.XXXXXX")"
trap 'rm -rf "$run"' EXIT
started=$SECONDS

# The blocks of every file, as a bash session script per file (and a file per
# Python block), made before anything runs so that a malformed file fails
# first.
python3 - "$run" "${files[@]}" <<'EOF'
import json, os, re, shlex, sys

run, files = sys.argv[1], sys.argv[2:]
fence = re.compile(r'^(\s*)(`{3,}|~{3,})(.*)$')
allowed = {'sh', 'sh no-run', 'python', 'rust', 'text'}
problems, plan = [], []

def blocks(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    i = 0
    while i < len(lines):
        m = fence.match(lines[i])
        if not m:
            i += 1
            continue
        indent, marks, info = m.group(1), m.group(2), m.group(3).strip()
        start, body = i + 1, []
        i += 1
        while i < len(lines):
            close = fence.match(lines[i])
            if close and close.group(2)[0] == marks[0] and len(close.group(2)) >= len(marks) and not close.group(3).strip():
                break
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        else:
            problems.append(f'{path}:{start}: the code block is never closed')
        i += 1
        yield start, info, body

def logical_lines(body):
    current = ''
    for line in body:
        current += line
        if current.endswith('\\'):
            current = current[:-1] + ' '
            continue
        yield current
        current = ''
    if current:
        yield current

for n, path in enumerate(files):
    if not os.path.isfile(path):
        problems.append(f'{path}: no such file')
        continue
    session = []
    counts = {'sh': 0, 'python': 0, 'no-run': 0, 'rust': 0, 'text': 0}
    needs_python = False
    for start, info, body in blocks(path):
        where = f'{path}:{start}'
        if info not in allowed:
            problems.append(f'{where}: code block of kind `{info or "(none)"}`: use sh, sh no-run, python, rust or text')
            continue
        if info == 'sh no-run':
            counts['no-run'] += 1
            for line in logical_lines(body):
                words = line.strip().split()
                if words and not words[0].startswith('#') and words[0] not in ('kubectl', 'docker'):
                    problems.append(f'{where}: a no-run block may hold only kubectl and docker commands and comments, not `{line.strip()}`')
            continue
        if info in ('rust', 'text'):
            counts[info] += 1
            continue
        session.append(f'cd "$DOCS_ROOT"; __docs_block={shlex.quote(where)}; echo "check-docs: {where} ({info})" >&2')
        if info == 'sh':
            counts['sh'] += 1
            needs_python |= any(re.search(r'\bpython3?\b', line) for line in body)
            session.extend(body)
        else:
            counts['python'] += 1
            needs_python = True
            script = os.path.join(run, f'file{n}-line{start}.py')
            with open(script, 'w', encoding='utf-8') as f:
                f.write('\n'.join(body) + '\n')
            session.append(f'python {shlex.quote(script)}')
    script = os.path.join(run, f'file{n}.sh')
    with open(script, 'w', encoding='utf-8') as f:
        f.write('\n'.join(session) + '\n')
    plan.append({'file': path, 'script': script, 'venv': needs_python, **counts})

for p in problems:
    print(f'check-docs: {p}', file=sys.stderr)
with open(os.path.join(run, 'plan.json'), 'w') as f:
    json.dump(plan, f)
sys.exit(1 if problems else 0)
EOF

# What `cargo` is in the sessions.
mkdir -p "$run/shim"
if [ "${DOCS_CARGO:-}" != literal ]; then
  if [ -z "${DOCS_BIN_DIR:-}" ]; then
    echo "check-docs: cargo build --release --workspace --bins" >&2
    cargo build --release --workspace --bins --quiet
    DOCS_BIN_DIR="$target_dir/release"
  fi
  DOCS_BIN_DIR="$(cd "$DOCS_BIN_DIR" && pwd)"
  export DOCS_BIN_DIR
  cat >"$run/shim/cargo" <<'EOF'
#!/usr/bin/env bash
# check-docs: `cargo run --release -q --bin NAME -- ARGS` runs $DOCS_BIN_DIR/NAME ARGS.
if [ "${1:-}" = run ] && [ "${2:-}" = --release ] && [ "${3:-}" = -q ] && [ "${4:-}" = --bin ] && [ -n "${5:-}" ]; then
  name="$5"
  shift 5
  if [ "$#" -gt 0 ]; then
    if [ "$1" != -- ]; then
      echo "check-docs: expected \`--\` after \`--bin $name\`, got \`$1\`" >&2
      exit 2
    fi
    shift
  fi
  exec "$DOCS_BIN_DIR/$name" "$@"
fi
echo "check-docs: the docs run cargo only as \`cargo run --release -q --bin NAME -- ARGS\`, not \`cargo $*\`" >&2
exit 2
EOF
  chmod +x "$run/shim/cargo"
fi

# The Python the blocks use.
make_venv() {
  local stamp="$venv/.check-docs-packages"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${python_packages[*]}" ]; then
    return
  fi
  echo "check-docs: making $venv (${python_packages[*]})" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${python_packages[@]}"
  echo "${python_packages[*]}" >"$stamp"
}

# One session per file.
session_prelude='set -euo pipefail
__docs_block="(before the first block)"
__docs_stop() {
  local status=$? pids alive
  trap - EXIT
  pids="$(jobs -p)"
  if [ -n "$pids" ]; then
    kill -TERM $pids 2>/dev/null || true
    for _ in $(seq 100); do
      alive=""
      for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
      [ -z "$alive" ] && break
      sleep 0.1
    done
    kill -KILL $pids 2>/dev/null || true
    wait 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ]; then
    echo "check-docs: FAILED: the block at $__docs_block (exit status $status)" >&2
  fi
  exit "$status"
}
trap __docs_stop EXIT
'

failed=()
totals=(0 0 0 0 0)
count() { python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))[int(sys.argv[2])]; print(p[sys.argv[3]])' "$run/plan.json" "$1" "$2"; }
for i in "${!files[@]}"; do
  file="${files[$i]}"
  script="$(count "$i" script)"
  sh_blocks="$(count "$i" sh)" py_blocks="$(count "$i" python)"
  norun="$(count "$i" no-run)" rust="$(count "$i" rust)" text="$(count "$i" text)"
  totals=($((totals[0] + sh_blocks)) $((totals[1] + py_blocks)) $((totals[2] + norun)) $((totals[3] + rust)) $((totals[4] + text)))
  if [ "$sh_blocks" -eq 0 ] && [ "$py_blocks" -eq 0 ]; then
    echo "check-docs: $file: nothing to run ($norun no-run, $rust rust, $text text blocks)" >&2
    continue
  fi
  if [ "$(count "$i" venv)" = True ]; then
    make_venv
  fi
  docs_tmp="$(mktemp -d "${TMPDIR:-/tmp}/check-docs.XXXXXX")"
  file_started=$SECONDS
  if (
    cd "$root"
    export DOCS_ROOT="$root" DOCS_TMP="$docs_tmp"
    export PATH="$run/shim:$venv/bin:$PATH"
    printf '%s\n' "$session_prelude" | cat - "$script" >"$run/session-$i.sh"
    exec bash "$run/session-$i.sh"
  ); then
    echo "check-docs: $file: ok ($sh_blocks sh, $py_blocks python blocks; $((SECONDS - file_started)) s)" >&2
    rm -rf "$docs_tmp"
  else
    echo "check-docs: $file: failed; its scratch directory is kept at $docs_tmp" >&2
    failed+=("$file")
  fi
done

echo
echo "check-docs: ${#files[@]} files in $((SECONDS - started)) s: ${totals[0]} sh and ${totals[1]} python blocks run," \
  "${totals[2]} no-run blocks skipped (kubectl, docker), ${totals[3]} rust blocks left to the guides crate's doc tests," \
  "${totals[4]} text blocks"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "check-docs: FAILED: ${failed[*]}"
  exit 1
fi
echo "check-docs: all blocks passed"
