#!/bin/bash
# usage: run.sh <args to ktune replay...>; logs command, load, and output to /tmp/sfig/runs.log
cd /work/main
{
echo "=================================================================="
echo "\$ (cwd /work/main) nice -n 10 /tmp/sfig/bin/ktune replay $*"
echo "date: $(date -Is)   uptime: $(uptime)"
nice -n 10 /tmp/sfig/bin/ktune replay "$@" 2>&1
echo "exit: $?"
} >> /tmp/sfig/runs.log
