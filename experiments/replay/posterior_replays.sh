#!/bin/sh
# Replays and what-if studies over the posterior draws of results/stampede-ib (README,
# "Replay with intervals"). Run from the repository root; ../shared/data must exist.
# Writes results/replay/<trace>/{replay.json,decomposition.png} and
# results/whatif/<trace>/{whatif.json,whatif.png}.
set -e
T=../shared/data/traces
P=results/stampede-ib
W="--workers 2"
NET='net2x: link_bw_GBps*=2, injection_bw_GBps*=2'
STACK='stack/2: post_header_delay_us*=0.5, post_rdma_delay_us*=0.5, rdma_pin_latency_us*=0.5'
mpiuq replay $T/ti_lulesh_512r --model packet,analytic,compute-only --params $P \
    --compute-scale 0.1 $W --out results/replay/ti_lulesh_512r
mpiuq replay $T/ti_nekbone_64r --model packet,analytic,compute-only --params $P \
    $W --out results/replay/ti_nekbone_64r
mpiuq replay $T/otf2_tracer_stencil4d_64r --model packet,analytic,compute-only --params $P \
    $W --out results/replay/otf2_tracer_stencil4d_64r
mpiuq whatif $T/ti_lulesh_512r --params $P --compute-scale 0.1 $W \
    --scenario "$NET" --scenario "$STACK" --out results/whatif/ti_lulesh_512r
mpiuq whatif $T/ti_nekbone_64r --params $P $W \
    --scenario "$NET" --scenario "$STACK" --out results/whatif/ti_nekbone_64r
mpiuq whatif $T/otf2_tracer_stencil4d_64r --params $P $W \
    --scenario "$NET" --scenario "$STACK" --scenario 'packet: model=packet' \
    --out results/whatif/otf2_tracer_stencil4d_64r

# Run to run: the same campaign with seed 2, the same replays and what-ifs over its draws,
# compared interval by interval (results/replay/run_to_run.txt, results/whatif/run_to_run_seed2.txt).
S=${SCRATCH:-$(mktemp -d)}
mpiuq campaign run experiments/stampede-ib-seed2.toml --out "$S/stampede-ib-seed2" --quiet --no-plots || true
P2="$S/stampede-ib-seed2"
mpiuq replay $T/ti_lulesh_512r --model packet,analytic,compute-only --params $P2 \
    --compute-scale 0.1 $W --out "$S/replay2/ti_lulesh_512r" > /dev/null
mpiuq replay $T/ti_nekbone_64r --model packet,analytic,compute-only --params $P2 \
    $W --out "$S/replay2/ti_nekbone_64r" > /dev/null
mpiuq replay $T/otf2_tracer_stencil4d_64r --model packet,analytic,compute-only --params $P2 \
    $W --out "$S/replay2/otf2_tracer_stencil4d_64r" > /dev/null
: > results/replay/run_to_run.txt
for t in ti_lulesh_512r ti_nekbone_64r otf2_tracer_stencil4d_64r; do
    python experiments/replay/compare_calibrations.py results/replay/$t/replay.json \
        "$S/replay2/$t/replay.json" >> results/replay/run_to_run.txt
done
{
mpiuq whatif $T/otf2_tracer_stencil4d_64r --params $P2 $W \
    --scenario "$NET" --scenario "$STACK" --scenario 'packet: model=packet'
mpiuq whatif $T/ti_lulesh_512r --params $P2 --compute-scale 0.1 $W \
    --scenario "$NET" --scenario "$STACK"
mpiuq whatif $T/ti_nekbone_64r --params $P2 $W --scenario "$NET" --scenario "$STACK"
} > results/whatif/run_to_run_seed2.txt
