#!/usr/bin/env bash
# A throw-away single-node SLURM cluster on this machine, to test profiles/slurm against a real scheduler.
#
#   tests/slurm/cluster.sh start STATE_DIR   install Debian's SLURM and munge packages if missing (needs root), then
#                                            start munged, slurmctld and slurmd with every state, spool, pid and log
#                                            file under STATE_DIR, and wait until the node is idle
#   tests/slurm/cluster.sh stop STATE_DIR    stop the daemons this script started and remove its config links
#
# The node has every CPU of the machine, its memory less 2 GB, and one fake GPU (gres gpu:fake:1 on /dev/null), so
# the profile's GPU requests are scheduled for real. Accounting is off, so jobs are followed with squeue (MinJobAge
# keeps finished jobs listed for 10 minutes). Exit status 3 from `start` means SLURM cannot run here (not root, no
# packages, or another SLURM already configured): the caller skips with the printed reason.
set -euo pipefail

usage() { echo "usage: $0 start|stop STATE_DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
state=$(realpath -m "$2")
cannot() { echo "cannot start a test SLURM cluster: $*" >&2; exit 3; }
packages=(slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge)

MARKER="# Written by tests/slurm/cluster.sh"

# SLURM reads slurm.conf (and gres.conf beside it) from /etc/slurm inside jobs whatever SLURM_CONF says. A link left
# by an earlier run that died (dangling, or to a file of ours) is replaced; anything else is a real configuration.
link_config() {
    local name=$1 target=/etc/slurm/$1
    if [[ -e $target || -L $target ]]; then
        if ! [[ -L $target ]] || { [[ -e $target ]] && [[ $(head -n 1 "$target") != "$MARKER"* ]]; }; then
            cannot "$target exists and is not this script's; refusing to replace a real SLURM configuration"
        fi
    fi
    ln -sfn "$state/$name" "$target"
}

install_packages() {
    command -v slurmctld > /dev/null && command -v munged > /dev/null && return
    [[ $(id -u) -eq 0 ]] || cannot "the packages ${packages[*]} are missing and installing them needs root"
    command -v apt-get > /dev/null || cannot "the packages ${packages[*]} are missing and there is no apt-get"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq --no-install-recommends "${packages[@]}" > "$state/apt.log" 2>&1; then
        apt-get update -qq >> "$state/apt.log" 2>&1 || true
        apt-get install -y -qq --no-install-recommends "${packages[@]}" >> "$state/apt.log" 2>&1 \
            || cannot "apt-get install ${packages[*]} failed (see $state/apt.log)"
    fi
}

write_config() {
    local host cpus memory
    host=$(hostname -s)
    cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc obeys OMP_NUM_THREADS, which a test worker sets
    memory=$(( $(free -m | awk '/^Mem:/ {print $2}') - 2048 ))
    mkdir -p "$state/ctld" "$state/spool" /etc/slurm
    cat > "$state/slurm.conf" <<EOF
$MARKER: a single-node test cluster without systemd, cgroups or accounting.
ClusterName=enkcvs-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
MailProg=/bin/true
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory Gres=gpu:fake:1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    # A GPU without hardware: AutoDetect off and a File, else the node drains for a lower gres count.
    printf '%s\nAutoDetect=off\nNodeName=%s Name=gpu Type=fake File=/dev/null\n' "$MARKER" "$host" > "$state/gres.conf"
    link_config slurm.conf
    link_config gres.conf
}

start_munge() {
    if munge -n 2> /dev/null | unmunge > /dev/null 2>&1; then
        return  # a munged is already running; leave it alone
    fi
    install -d -o munge -g munge -m 0755 /run/munge
    runuser -u munge -- /usr/sbin/munged
    cp /run/munge/munged.pid "$state/munged.pid"
    for _ in $(seq 50); do
        munge -n 2> /dev/null | unmunge > /dev/null 2>&1 && return
        sleep 0.1
    done
    cannot "munged started but 'munge -n | unmunge' does not succeed"
}

start() {
    mkdir -p "$state"
    # (zombies of a stopped cluster, state Z, do not count)
    if ps -eo stat=,comm= | awk '$1 !~ /^Z/ && ($2 == "slurmctld" || $2 == "slurmd") {found = 1} END {exit !found}'; then
        cannot "a slurmctld or slurmd is already running on this machine"
    fi
    install_packages
    write_config
    start_munge
    slurmctld -i
    slurmd
    for _ in $(seq 150); do
        if [[ $(sinfo -h -o %t 2> /dev/null) == idle ]]; then
            echo "SLURM test cluster up: $(sinfo -h -o '%P %D %c CPUs %m MB %G %t')"
            return
        fi
        sleep 0.2
    done
    echo "the node did not become idle; slurmctld.log:" >&2
    tail -n 20 "$state/slurmctld.log" >&2
    stop
    exit 1
}

stop_daemon() {
    local pidfile=$1 pid
    [[ -f $pidfile ]] || return 0
    pid=$(< "$pidfile")
    kill "$pid" 2> /dev/null || true
    # Stopped daemons can linger as zombies of a dead parent: state Z counts as stopped.
    for _ in $(seq 100); do
        [[ -r /proc/$pid/stat ]] || break
        [[ $(awk '{print $3}' "/proc/$pid/stat" 2> /dev/null) == Z ]] && break
        sleep 0.1
    done
    rm -f "$pidfile"
}

stop() {
    stop_daemon "$state/slurmd.pid"
    stop_daemon "$state/slurmctld.pid"
    stop_daemon "$state/munged.pid"
    for name in slurm.conf gres.conf; do
        if [[ $(readlink "/etc/slurm/$name" || true) == "$state/$name" ]]; then
            rm -f "/etc/slurm/$name"
        fi
    done
}

case $action in
    start) start ;;
    stop) stop ;;
    *) usage ;;
esac
