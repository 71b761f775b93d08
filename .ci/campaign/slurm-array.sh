#!/usr/bin/env bash
# A simtspec campaign as a Slurm job array (README, "Campaigns across machines"):
# 16 array tasks, task SLURM_ARRAY_TASK_ID running shard SLURM_ARRAY_TASK_ID of 16
# of the suite and of the fuzzer, then a merge job that depends on the array.
#
#   bash .ci/campaign/slurm-array.sh     # from the repository root: submits both
#
# Run this way (outside a Slurm job) it submits itself as the array and the
# merge with --dependency=afterany on the array, so that the merge runs (and
# names the shards that are missing) even when a shard failed. The results go
# to $CAMPAIGN (default campaign/) on a file system every node shares.
#SBATCH --job-name=simtspec-shard
#SBATCH --array=0-15
#SBATCH --cpus-per-task=4
#SBATCH --time=06:00:00
#SBATCH --output=campaign/slurm-%A_%a.out
# Shards record nothing in a results store (--no-db): SQLite must not be shared
# by several machines over a network file system. The merge records the merged
# run, once, in the campaign's store (--db).
set -euo pipefail
export PATH="$PWD/build/release:$PATH"
CAMPAIGN=${CAMPAIGN:-campaign}
mkdir -p "$CAMPAIGN"

if [[ "${1:-}" == merge ]]; then
  simtspec merge "$CAMPAIGN"/test-* --out "$CAMPAIGN/merged" --db "$CAMPAIGN/results.db"
  simtspec merge "$CAMPAIGN"/fuzz-*.jsonl --out "$CAMPAIGN/merged-fuzz" --db "$CAMPAIGN/results.db"
  exit
fi

if [[ -z "${SLURM_ARRAY_TASK_ID:-}" ]]; then
  array=$(sbatch --parsable "$0")
  sbatch --dependency=afterany:"$array" --job-name=simtspec-merge \
    --output="$CAMPAIGN/slurm-merge-%j.out" --wrap "bash $0 merge"
  exit
fi

# Exit status 1 (a check failed) is a result; 2 or more ends the task as failed.
simtspec test suites --shard "${SLURM_ARRAY_TASK_ID}/16" --no-db --jobs 4 --quiet --out "$CAMPAIGN/test-${SLURM_ARRAY_TASK_ID}" || [[ $? -eq 1 ]]
simtspec fuzz --seed 20261128 --no-db --count 5000 --jobs 4 --shard "${SLURM_ARRAY_TASK_ID}/16" --results "$CAMPAIGN/fuzz-${SLURM_ARRAY_TASK_ID}.jsonl" --out "$CAMPAIGN/regress-${SLURM_ARRAY_TASK_ID}" || [[ $? -eq 1 ]]
