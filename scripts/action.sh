#!/usr/bin/env bash
# The GitHub Action's run steps (action.yml calls them; tests/action_test.py runs them too).
#   action.sh install   a virtual environment with kvlint in it (INPUT_VERSION picks which)
#   action.sh run       kvlint over INPUT_PATHS: annotations in the log, the SARIF file, the job
#                       summary and the step outputs (python -m kvlint.action does the work)
# KVLINT_PYTHON runs an already installed kvlint instead of the one `install` made.
set -euo pipefail

action_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${KVLINT_VENV:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/kvlint-venv}"

install() {
    local version="${INPUT_VERSION:-}" spec
    if [[ -z "$version" ]]; then
        spec="$action_dir"  # the action's own checkout: the ref in `uses: ...@ref`
    elif [[ "$version" =~ ^v?[0-9]+(\.[0-9]+)*((a|b|rc|\.post|\.dev)[0-9]+)?$ ]]; then
        spec="kvlint==${version#v}"  # a release on the package index
    else
        if [[ -z "${GITHUB_ACTION_REPOSITORY:-}" ]]; then
            echo "kvlint action: version '$version' is not a release and GITHUB_ACTION_REPOSITORY is unset" >&2
            exit 2
        fi
        spec="git+${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_ACTION_REPOSITORY}@${version}"
    fi
    # A virtual environment: the runners' system Python refuses `pip install` (PEP 668).
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"
    "$venv/bin/kvlint" --version
}

run() {
    local python="${KVLINT_PYTHON:-$venv/bin/python}"
    exec "$python" -m kvlint.action
}

case "${1:-}" in
    install) install ;;
    run) run ;;
    *)
        echo "usage: $0 install|run" >&2
        exit 2
        ;;
esac
