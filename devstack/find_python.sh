#!/usr/bin/env bash
# Prints a Python >= 3.12 interpreter (Django 6 needs it). Debian 12 ships 3.11, so look at pyenv builds too.
set -u
ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }
# 3.12 first: the version the Docker image uses, so development and production agree.
candidates=("${PYTHON:-}" python3.12 python3.13 python3)
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
for dir in $(ls -d "$root"/versions/3.12* "$root"/versions/3.1[3-9]* 2>/dev/null); do candidates+=("$dir/bin/python3"); done
for c in "${candidates[@]}"; do
  [ -n "$c" ] || continue
  path=$(command -v "$c" 2>/dev/null) || continue
  if ok "$path"; then echo "$path"; exit 0; fi
done
echo "No Python >= 3.12 found (Django 6 needs it). Install one, or set PYTHON=/path/to/python3.12." >&2
exit 1
