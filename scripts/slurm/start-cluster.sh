#!/usr/bin/env bash
# Start a real single-node Slurm cluster (Debian slurm-wlm 22.05 + munge) on this machine, for tests and CI.
#
#   bash scripts/slurm/start-cluster.sh            # 4 fake GPUs
#   SPECQUAL_SLURM_GPUS=0 bash scripts/slurm/start-cluster.sh
#
# Idempotent: installs slurm-wlm and munge if missing, (re)writes slurm.conf only when it changed, starts
# munged, slurmctld and slurmd if they are not running, then waits until the node is idle. Needs root.
# No systemd and no cgroups here, hence proctrack/linuxproc and task/none. Fake GPUs are plain files named in
# gres.conf (character devices that behave like /dev/null): GPU requests (--gpus, --gres=gpu:N) are accepted and jobs get CUDA_VISIBLE_DEVICES.
set -euo pipefail
GPUS=${SPECQUAL_SLURM_GPUS:-4}
CONF_DIR=/etc/slurm
STATE=${SPECQUAL_SLURM_STATE:-/var/lib/specqual-slurm}
log() { echo "start-cluster: $*" >&2; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  log "installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

host=$(hostname -s)
mkdir -p "$STATE"/{ctld,d,log,gpus} /run/munge /var/log/munge /var/lib/munge "$CONF_DIR"

# munge: a key, then the daemon (it refuses group/world-writable directories).
[ -s /etc/munge/munge.key ] || { mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none; }
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
chmod 0700 /etc/munge /var/lib/munge /var/log/munge; chmod 0755 /run/munge; chmod 0400 /etc/munge/munge.key
if ! munge -n >/dev/null 2>&1; then
  log "starting munged"
  if id munge >/dev/null 2>&1; then runuser -u munge -- munged; else munged --force; fi
  for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
fi

# The node line from the machine itself; memory a bit under what is free so slurmd never drains the node.
# The daemons talk over loopback (one node), so the machine's name need not resolve.
layout=$(slurmd -C | head -1 | sed -e "s/^NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/" -e 's/ RealMemory=[0-9]*//')
mem=$(( $(free -m | awk '/^Mem:/{print $2}') * 9 / 10 ))
gres=""; gres_conf=""
if [ "$GPUS" -gt 0 ]; then
  # slurmd wants character devices: each fake GPU is a node like /dev/null (1:3).
  for i in $(seq 0 $((GPUS - 1))); do
    f="$STATE/gpus/gpu$i"; [ -c "$f" ] || { rm -f "$f"; mknod "$f" c 1 3; }
  done
  gres=" Gres=gpu:$GPUS"
  gres_conf="NodeName=$host Name=gpu File=$STATE/gpus/gpu[0-$((GPUS - 1))]"
fi

conf=$(cat <<CONF
# Written by specqual scripts/slurm/start-cluster.sh: a single-node test cluster.
ClusterName=specqual
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
EnforcePartLimits=ALL
MailProg=/bin/true
ReturnToService=2
MinJobAge=300
KillWait=5
GresTypes=gpu
$layout RealMemory=$mem$gres State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
)
changed=0
if [ "$(cat "$CONF_DIR/slurm.conf" 2>/dev/null)" != "$conf" ]; then
  printf '%s\n' "$conf" >"$CONF_DIR/slurm.conf"; changed=1
fi
if [ "$(cat "$CONF_DIR/gres.conf" 2>/dev/null)" != "$gres_conf" ]; then
  printf '%s\n' "$gres_conf" >"$CONF_DIR/gres.conf"; changed=1
fi

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ "$changed" = 1 ]; then
  # A new configuration: restart both daemons so they agree on it.
  for pidf in "$STATE/slurmd.pid" "$STATE/slurmctld.pid"; do
    if running "$pidf"; then kill "$(cat "$pidf")"; for _ in $(seq 50); do running "$pidf" || break; sleep 0.1; done; fi
  done
fi
running "$STATE/slurmctld.pid" || { log "starting slurmctld"; slurmctld -c; }
running "$STATE/slurmd.pid" || { log "starting slurmd"; slurmd; }

for _ in $(seq 300); do
  state=$(sinfo -h -n "$host" -o '%T' 2>/dev/null || true)
  case "$state" in
    idle|mixed|allocated) log "node $host is $state ($GPUS fake GPUs)"; exit 0 ;;
    drain*|down*) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
  esac
  sleep 0.1
done
log "node $host did not become idle (state: ${state:-no answer}); see $STATE/log/"
tail -20 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" >&2 || true
exit 1
