#!/usr/bin/env bash
# The GitHub Action's steps (action.yml calls them; tests/action_test.py runs them too).
#   action.sh check-runner  fails with one clear error on Windows (the steps need a POSIX runner)
#   action.sh cache-key  the pip cache's folder and key, as step outputs for actions/cache
#   action.sh install    a virtual environment with kvlint in it (INPUT_VERSION picks which)
#   action.sh run        kvlint over INPUT_PATHS: annotations in the log, the SARIF file, the job
#                        summary and the step outputs (python -m kvlint.action does the work)
# KVLINT_SETUP_PYTHON is the interpreter actions/setup-python installed (the runner's own
# python3 when unset: the tests, a self-hosted runner); KVLINT_PYTHON runs an already installed
# kvlint instead of the one `install` made.
set -euo pipefail

action_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${KVLINT_VENV:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/kvlint-venv}"
pip_cache="${KVLINT_PIP_CACHE:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/kvlint-pip-cache}"
base_python="${KVLINT_SETUP_PYTHON:-python3}"

fail() {
    # To stderr, which the runner reads for workflow commands too: `spec` runs inside $(...).
    echo "::error title=kvlint action::$1" >&2
    echo "kvlint action: $1" >&2
    exit 2
}

# What pip installs: the action's own checkout, a release of the `kvcache-lint` distribution
# on the package index, or a git ref of this repository.
spec() {
    local version="${INPUT_VERSION:-}"
    if [[ -z "$version" ]]; then
        echo "$action_dir"  # the ref in `uses: ...@ref`
    elif [[ "$version" =~ ^v?[0-9]+(\.[0-9]+)*((a|b|rc|\.post|\.dev)[0-9]+)?$ ]]; then
        # The index's `kvlint` is another project (same import package and command, and a
        # 0.1.0 of its own): a release is installed under kvlint's distribution name.
        echo "kvcache-lint==${version#v}"
    elif [[ -n "${GITHUB_ACTION_REPOSITORY:-}" ]]; then
        echo "git+${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_ACTION_REPOSITORY}@${version}"
    else
        fail "version '$version' is not a release and GITHUB_ACTION_REPOSITORY is unset"
    fi
}

cache_key() {
    # The key names the runner's OS, the Python and what is installed: a new release, or a
    # change to the checkout's dependencies, starts a new cache (the old one seeds it).
    local what python_version digest
    what="$(spec)"
    python_version="$("$base_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    if [[ -d "$what" ]]; then
        what="$(cat "$what/pyproject.toml")"
    fi
    digest="$(printf '%s' "$what" | "$base_python" -c \
        'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])')"
    local prefix="kvlint-pip-${RUNNER_OS:-$(uname -s)}-py${python_version}-"
    {
        echo "dir=$pip_cache"
        echo "key=${prefix}${digest}"
        echo "restore-key=${prefix}"
    } >>"${GITHUB_OUTPUT:-/dev/stdout}"
}

install() {
    local what
    what="$(spec)"
    # A virtual environment of its own: the runners' system Python refuses `pip install`
    # (PEP 668), and the job's own Python and packages stay as they were.
    "$base_python" -m venv "$venv"
    PIP_CACHE_DIR="$pip_cache" "$venv/bin/python" -m pip install --quiet \
        --disable-pip-version-check "$what"
    "$venv/bin/kvlint" --version
}

run() {
    local python="${KVLINT_PYTHON:-$venv/bin/python}"
    # -I (isolated): the workspace is a pull request's checkout, and `python -m` alone would put
    # it first on sys.path, so its `kvlint/__init__.py` or `yaml.py` would run with the job's
    # secrets. -I leaves out the working directory, PYTHON* variables and the user site.
    exec "$python" -I -m kvlint.action
}

case "$(uname -s)" in
    MINGW* | MSYS* | CYGWIN* | Windows_NT)
        fail "the kvlint action runs on Linux and macOS runners; on Windows, install kvcache-lint with pip and run kvlint check"
        ;;
esac

case "${1:-}" in
    check-runner) ;;  # the check above is all
    cache-key) cache_key ;;
    install) install ;;
    run) run ;;
    *)
        echo "usage: $0 check-runner|cache-key|install|run" >&2
        exit 2
        ;;
esac
