#!/usr/bin/env bash
# What the e2e cluster leaves on the host, compared with before it started.
#   check-clean.sh baseline   record the host's state (up.sh runs it first)
#   check-clean.sh check      after down.sh: print a table, exit 1 on any leak
# Checked: processes, mounts, network namespaces, interfaces, routes,
# iptables/ip6tables rules, cgroups, sysctls.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
BL=$STATE/baseline

snap() { # DIR
  mkdir -p "$1"
  ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort >"$1/links"
  ip -o route show | sort >"$1/routes"
  ip netns list 2>/dev/null | awk '{print $1}' | sort >"$1/netns"
  for ipt in iptables ip6tables; do
    if command -v $ipt-save >/dev/null; then
      # rules and user chains per table (an empty table appearing is no leak)
      $ipt-save 2>/dev/null | awk '/^\*/ {t = substr($1, 2)} /^-A / {print t, $0}
        /^:/ {c = substr($1, 2); if (c !~ /^(INPUT|FORWARD|OUTPUT|PREROUTING|POSTROUTING)$/) print t, ":" c}' | sort >"$1/$ipt"
    else : >"$1/$ipt"; fi
  done
  awk '{print $2}' /proc/mounts | sort >"$1/mounts"
  ls -d /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods* 2>/dev/null | sort >"$1/cgroups" || true
  sysctl -a 2>/dev/null | grep -E '^(net\.ipv4\.ip_forward|net\.bridge\.|net\.ipv4\.conf\.all\.route_localnet|vm\.overcommit_memory|vm\.panic_on_oom|kernel\.panic |kernel\.panic_on_oops|kernel\.keys\.root_max)' | sort >"$1/sysctl" || true
}

case ${1:?usage: check-clean.sh baseline|check} in
baseline) rm -rf "$BL"; snap "$BL" ;;
check)
  [[ -d $BL ]] || die "no baseline in $BL (up.sh records it)"
  now=$(mktemp -d); trap 'rm -rf "$now"' EXIT
  snap "$now"
  fail=0
  row() { printf '  %-11s %-5s %s\n' "$1" "$2" "$3"; [[ $2 == ok ]] || fail=1; }
  added() { comm -13 "$BL/$1" "$now/$1"; }
  echo "e2e-down leak check (against the baseline taken by e2e-up):"
  # processes: every pid the harness ever started, and anything running from its state dir or tools cache
  procs=""
  if [[ -f $RUN/pids.all ]]; then
    while read -r name pid; do kill -0 "$pid" 2>/dev/null && procs+="$name($pid) "; done <"$RUN/pids.all"
  fi
  for d in /proc/[0-9]*; do
    cl=$(tr '\0' ' ' 2>/dev/null <"$d/cmdline") || continue
    exe=$(readlink "$d/exe" 2>/dev/null || true)
    # A flock waiting for a lock is another user queueing for the cluster
    # (its command names the state dir), not something the harness left.
    [[ $exe == */flock ]] && continue
    if [[ $cl == *"$STATE/"* || $exe == "$CACHE_ROOT/"* ]]; then procs+="${d#/proc/}:${cl:0:60} "; fi
  done
  [[ -z $procs ]] && row processes ok "none left" || row processes LEAK "$procs"
  m=$(added mounts); [[ -z $m ]] && row mounts ok "none added" || row mounts LEAK "$(echo $m)"
  n=$(added netns); [[ -z $n ]] && row netns ok "none added" || row netns LEAK "$(echo $n)"
  l=$(added links); [[ -z $l ]] && row interfaces ok "none added" || row interfaces LEAK "$(echo $l)"
  r=$(added routes); [[ -z $r ]] && row routes ok "none added" || row routes LEAK "$(echo "$r" | head -3)"
  for ipt in iptables ip6tables; do
    d=$(diff "$BL/$ipt" "$now/$ipt" | grep '^[<>]' || true)
    [[ -z $d ]] && row "$ipt" ok "rules as before" || row "$ipt" LEAK "$(echo "$d" | wc -l) lines differ: $(echo "$d" | head -3 | tr '\n' ' ')"
  done
  c=$(added cgroups); [[ -z $c ]] && row cgroups ok "none added" || row cgroups LEAK "$(echo $c)"
  s=$(diff "$BL/sysctl" "$now/sysctl" | grep '^>' || true)
  [[ -z $s ]] && row sysctl ok "as before" || row sysctl LEAK "$(echo $s)"
  exit $fail
  ;;
*) die "usage: check-clean.sh baseline|check" ;;
esac
