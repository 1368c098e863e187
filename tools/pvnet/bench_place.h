// SPDX-License-Identifier: MIT
/* bench_place.h - pvnet bench: where pvnetd and the frontend domains run (pure) */
#ifndef PVNET_TOOLS_BENCH_PLACE_H
#define PVNET_TOOLS_BENCH_PLACE_H

#include <sched.h>
#include <stddef.h>

/**
 * enum bench_placement - which CPUs the processes of a run may use
 * @BENCH_PLACE_SPLIT: pvnetd on CPUs of its own, the frontend domains on
 *	the others, as a Xen host pins dom0's vCPUs (dom0_vcpus_pin) and gives
 *	the guests the remaining CPUs, and as the memif peer runs each
 *	dpdk-testpmd on a core of its own
 * @BENCH_PLACE_SPREAD: no affinity: the scheduler places every thread
 */
enum bench_placement {
	BENCH_PLACE_SPLIT,
	BENCH_PLACE_SPREAD,
};

/**
 * bench_parse_placement() - "split" or "spread"
 * @s: the text
 * @out: the placement
 *
 * Return: 0, or -EINVAL
 */
int bench_parse_placement(const char *s, enum bench_placement *out);

/**
 * bench_placement_name() - the name bench_parse_placement() takes
 * @p: a placement
 *
 * Return: "split" or "spread"
 */
const char *bench_placement_name(enum bench_placement p);

/**
 * bench_placement_split() - divide @allowed between pvnetd and the frontends
 * @allowed: the CPUs the bench may use (its own affinity)
 * @pvnetd: receives the first half of them, at least one
 * @guests: receives the rest
 *
 * Return: 0, or -EINVAL when @allowed has fewer than two CPUs (nothing to split)
 */
int bench_placement_split(const cpu_set_t *allowed, cpu_set_t *pvnetd, cpu_set_t *guests);

/**
 * bench_cpus_format() - a CPU set as taskset(1) and /sys write them ("0-2,5")
 * @s: the set
 * @buf: receives the text ("" for an empty set)
 * @len: bytes at @buf; a list that does not fit is cut after its last whole item
 */
void bench_cpus_format(const cpu_set_t *s, char *buf, size_t len);

/**
 * bench_cpus_first() - the lowest CPU of a set
 * @s: the set
 *
 * Return: its number, or -1 for an empty set
 */
int bench_cpus_first(const cpu_set_t *s);

#endif /* PVNET_TOOLS_BENCH_PLACE_H */
