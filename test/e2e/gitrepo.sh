#!/usr/bin/env bash
# The test platform's Git repository, served to Argo CD by git daemon on
# 127.0.0.1 (git://127.0.0.1:9418/platform.git, branch main).
#   gitrepo.sh init          (re)create it from testdata/gitrepo
#   gitrepo.sh break APP     commit NEVER_READY=true for APP (it never becomes Ready)
#   gitrepo.sh fix APP       commit NEVER_READY=false for APP
#   gitrepo.sh head          print the commit of main
set -euo pipefail
source "$(dirname "$0")/lib.sh"

G=$STATE/git; W=$G/work
export GIT_AUTHOR_NAME=e2e GIT_AUTHOR_EMAIL=e2e@deployctl.invalid GIT_COMMITTER_NAME=e2e GIT_COMMITTER_EMAIL=e2e@deployctl.invalid
git_() { git -C "$W" -c init.defaultBranch=main -c commit.gpgsign=false "$@"; }

set_never_ready() { # APP true|false
  local f
  f=$(grep -l 'name: NEVER_READY' "$W/apps/$1"/*.yaml) || die "no breakable workload in apps/$1"
  sed -i "s/{name: NEVER_READY, value: \"[a-z]*\"}/{name: NEVER_READY, value: \"$2\"}/" $f
  git_ commit -qam "e2e: $1 NEVER_READY=$2" || true
  git_ push -q origin main
}

case ${1:?usage: gitrepo.sh init|break APP|fix APP|head} in
init)
  rm -rf "$G"; mkdir -p "$G"
  git -c init.defaultBranch=main init -q --bare "$G/platform.git"
  cp -r "$E2E_DIR/testdata/gitrepo" "$W"
  git_ init -q; git_ add -A; git_ commit -qm "test platform"
  git_ remote add origin "$G/platform.git"; git_ push -q origin main
  ;;
break) set_never_ready "${2:?app}" true ;;
fix) set_never_ready "${2:?app}" false ;;
head) git_ rev-parse HEAD ;;
*) die "usage: gitrepo.sh init|break APP|fix APP|head" ;;
esac
