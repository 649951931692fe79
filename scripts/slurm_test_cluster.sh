#!/usr/bin/env bash
# A one-machine SLURM cluster for the tests marked `slurm` (and for trying the cluster recipes of
# docs/cluster.md): one node on 127.0.0.1 with this machine's CPUs and memory, a partition
# `debug` (and `short`, with a 1-minute limit), and job accounting (slurmdbd on a private
# MariaDB): submitit learns that a job died (scancel, time limit) only through `sacct`, and
# without it the launcher waits forever for a cancelled job.
#   bash scripts/slurm_test_cluster.sh start   # ~15 s once the packages are installed
#   export SLURM_CONF=/tmp/ner-slurm-test/slurm.conf   # the line `start` prints last
#   sinfo; sbatch ...; bash scripts/slurm_test_cluster.sh stop
# Needs root (the daemons run as root, jobs as their submitter). Installs the Debian packages
# slurm-wlm, munge, slurmdbd and mariadb-server when they are missing (apt-get, about 2 minutes).
# Everything it writes lives under SLURM_TEST_DIR (default /tmp/ner-slurm-test); `stop` ends the
# daemons it started and deletes that folder.
set -euo pipefail
RUN=${SLURM_TEST_DIR:-/tmp/ner-slurm-test}
DB_PORT=${SLURM_TEST_DB_PORT:-3307}
LIB=/usr/lib/x86_64-linux-gnu/slurm-wlm
MUNGE_SOCKET=/run/munge/munge.socket.2

die() {
  echo "slurm_test_cluster: $*" >&2
  exit 1
}

install_packages() {
  local missing=()
  command -v slurmctld >/dev/null || missing+=(slurm-wlm)
  command -v munged >/dev/null || missing+=(munge)
  command -v slurmdbd >/dev/null || missing+=(slurmdbd)
  command -v mariadbd >/dev/null || missing+=(mariadb-server)
  [ ${#missing[@]} -eq 0 ] && return
  [ "$(id -u)" -eq 0 ] || die "installing ${missing[*]} needs root"
  echo "slurm_test_cluster: installing ${missing[*]} (apt-get) ..."
  # The packages' own services stay down: this script starts its own daemons.
  local policy=/usr/sbin/policy-rc.d added=
  [ -e "$policy" ] || { printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && added=1; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ -z "$added" ] || rm -f "$policy"
}

# write_conf: slurm.conf and slurmdbd.conf for one node with this machine's CPUs and memory.
write_conf() {
  local cpus mem
  cpus=$(nproc)
  mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10))
  cat >"$RUN/slurm.conf" <<EOF
ClusterName=nertest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$RUN/slurmctld
SlurmdSpoolDir=$RUN/slurmd
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$RUN/log/slurmctld.log
SlurmdLogFile=$RUN/log/slurmd.log
PluginDir=$LIB
# No cgroups: processes are tracked by their parent ids and jobs are not confined.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# CPUs and memory are the consumable resources; a job without --mem gets DefMemPerCPU per CPU
# instead of the whole node, so jobs of one CPU each run side by side.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=$((mem / cpus))
SlurmdParameters=config_overrides
ReturnToService=2
# A job past its time limit is killed 5 s after SIGTERM (default 30 s).
KillWait=5
MinJobAge=300
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
JobAcctGatherType=jobacct_gather/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
# A partition with a 1-minute limit, refusing longer jobs at submission (as many clusters do).
PartitionName=short Nodes=localhost MaxTime=1 State=UP
EnforcePartLimits=ALL
EOF
  cat >"$RUN/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=root
PidFile=$RUN/slurmdbd.pid
LogFile=$RUN/log/slurmdbd.log
PluginDir=$LIB
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=root
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$RUN/slurmdbd.conf"
}

start_munge() {
  # Slurm's clients (sacctmgr among them) talk to munged only on its default socket.
  [ ! -S "$MUNGE_SOCKET" ] || ! munge -n >/dev/null 2>&1 || die "a munged already runs on $MUNGE_SOCKET"
  mkdir -p "$RUN/munge" "$(dirname "$MUNGE_SOCKET")"
  chmod 700 "$RUN/munge"
  dd if=/dev/urandom of="$RUN/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$RUN/munge/munge.key"
  munged --force --key-file="$RUN/munge/munge.key" --socket="$MUNGE_SOCKET" \
    --pid-file="$RUN/munge/munged.pid" --log-file="$RUN/log/munged.log" \
    --seed-file="$RUN/munge/munged.seed"
}

start_database() {
  mariadb-install-db --user=root --datadir="$RUN/mysql" --auth-root-authentication-method=normal \
    --skip-test-db >"$RUN/log/mariadb-install.log" 2>&1
  mariadbd --user=root --datadir="$RUN/mysql" --socket="$RUN/mysql.sock" --port="$DB_PORT" \
    --bind-address=127.0.0.1 --pid-file="$RUN/mysql.pid" --log-error="$RUN/log/mariadb.log" \
    --innodb-buffer-pool-size=64M >>"$RUN/log/mariadb.log" 2>&1 &
  wait_for "MariaDB" mariadb --socket="$RUN/mysql.sock" -u root -e "SELECT 1"
  # slurmdbd connects over TCP, as root@127.0.0.1 (no password, reachable only from here).
  mariadb --socket="$RUN/mysql.sock" -u root \
    -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL ON *.* TO 'root'@'127.0.0.1'"
}

# wait_for WHAT COMMAND...: retry COMMAND for up to 30 s.
wait_for() {
  local what=$1 until=$((SECONDS + 30))
  shift
  while [ $SECONDS -lt $until ]; do
    "$@" >/dev/null 2>&1 && return
    sleep 0.2
  done
  die "$what did not come up; see the logs in $RUN/log"
}

node_idle() {
  [ "$(sinfo -h -N -o %t 2>/dev/null | sort -u)" = idle ]
}

start() {
  install_packages
  [ ! -e "$RUN/slurm.conf" ] || die "a cluster already runs from $RUN: stop it first"
  mkdir -p "$RUN/log" "$RUN/slurmctld" "$RUN/slurmd"
  # munged and the job steps reach the socket through every folder above it.
  chmod 755 "$RUN"
  export SLURM_CONF="$RUN/slurm.conf"
  write_conf
  start_munge
  start_database
  slurmdbd
  wait_for "slurmdbd" sacctmgr -i list cluster
  sacctmgr -i add cluster nertest >/dev/null 2>&1 || true
  slurmctld -i
  slurmd -N localhost
  wait_for "the node (sinfo idle)" node_idle
  echo "slurm_test_cluster: running from $RUN"
  echo "export SLURM_CONF=$SLURM_CONF"
}

# stop_pid NAME PIDFILE: end the daemon whose process id is in PIDFILE and wait for it.
stop_pid() {
  local pid
  [ -s "$2" ] || return 0
  pid=$(cat "$2")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  echo "slurm_test_cluster: $1 did not stop; killing it" >&2
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  [ -d "$RUN" ] || return 0
  export SLURM_CONF="$RUN/slurm.conf"
  [ ! -e "$SLURM_CONF" ] || scancel --user="$(id -un)" 2>/dev/null || true
  stop_pid slurmd "$RUN/slurmd.pid"
  stop_pid slurmctld "$RUN/slurmctld.pid"
  stop_pid slurmdbd "$RUN/slurmdbd.pid"
  stop_pid mariadbd "$RUN/mysql.pid"
  stop_pid munged "$RUN/munge/munged.pid"
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  rm -rf "$RUN"
  echo "slurm_test_cluster: stopped, $RUN removed"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) die "usage: $0 start|stop (state in SLURM_TEST_DIR, default /tmp/ner-slurm-test)" ;;
esac
